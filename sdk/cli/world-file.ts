/**
 * The world file, `kit.world.yaml` (docs/world-file.md): a local world declared in the app's
 * repository — its twins (built-in by vendor id, the app's own by `path`, WebAssembly
 * components by `component`), each twin's colocated scenario file and its checks by path.
 * Read here and checked whole before anything is opened: a mistake is KitError
 * `invalid_world_file` naming the file, the line and the field.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node, type Pair } from 'yaml';
import { KitError } from '../../runtime/errors.js';
import { VENDOR_ID } from '../../runtime/runner/twin-check.js';

export const WORLD_FILE_NAME = 'kit.world.yaml';
/** A world file is a few dozen lines; anything much larger is not one. */
const MAX_WORLD_FILE_BYTES = 256 * 1024;
const NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;
const CHECK_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const TOP_KEYS = ['world', 'org', 'twins'];
const TWIN_KEYS = ['path', 'component', 'scenario', 'checks'];

/** A path the file names, resolved: absolute, and as written with its line (for errors later). */
export interface DeclaredPath {
  path: string;
  written: string;
  line: number;
}

export interface WorldFileTwin {
  vendor: string;
  /** The line of the twin's key. */
  line: number;
  kind: 'builtin' | 'path' | 'component';
  /** `path`: the entry file to build and the folder to watch for edits. */
  entry?: DeclaredPath & { folder: string };
  /** `component`: the WebAssembly component file. */
  component?: DeclaredPath;
  scenario?: DeclaredPath;
  checks: (DeclaredPath & { name: string })[];
}

export interface WorldFile {
  /** Absolute. */
  file: string;
  /** The file's folder: every path it names stays inside it. */
  dir: string;
  world?: string;
  org?: string;
  twins: WorldFileTwin[];
}

/** `<dir>/kit.world.yaml` read and checked, or null when there is none. */
export function readWorldFile(dir: string): WorldFile | null {
  const file = join(resolve(dir), WORLD_FILE_NAME);
  if (!existsSync(file)) return null;
  let text: string;
  try {
    const info = statSync(file);
    if (!info.isFile()) throw new Error('not a regular file');
    if (info.size > MAX_WORLD_FILE_BYTES) throw new Error(`${info.size} bytes; a world file is at most ${MAX_WORLD_FILE_BYTES}`);
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new KitError('invalid_world_file', `${file}: cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { file, field: '' });
  }
  return parseWorldFile(text, file);
}

/** Checks a world file's text; `file` is its absolute path (paths are resolved beside it). */
export function parseWorldFile(text: string, file: string): WorldFile {
  const dir = dirname(file);
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, uniqueKeys: false, prettyErrors: false });
  const fail = (line: number | undefined, field: string, problem: string): never => {
    throw new KitError('invalid_world_file', `${file}${line !== undefined ? `:${line}` : ''}: ${field === '' ? '' : `${field}: `}${problem}`, { file, ...(line !== undefined ? { line } : {}), field });
  };
  const lineOf = (node: unknown): number | undefined => {
    const range = (node as Node | null | undefined)?.range;
    return range ? counter.linePos(range[0]).line : undefined;
  };
  const first = doc.errors[0];
  if (first !== undefined) fail(counter.linePos(first.pos[0]).line, '', `not YAML: ${first.message.split('\n')[0]}`);
  const root = doc.contents;
  if (!isMap(root)) fail(lineOf(root) ?? 1, '', 'a world file is a map with `twins:` (docs/world-file.md)');
  const top = entries(root as Parameters<typeof entries>[0], '', fail, lineOf);
  const out: WorldFile = { file, dir, twins: [] };
  for (const [key, { value, line }] of top) {
    if (!TOP_KEYS.includes(key)) fail(line, key, `unknown key (a world file has: ${TOP_KEYS.join(', ')})`);
  }
  const world = top.get('world');
  if (world !== undefined) out.world = nameOf(world, 'world', fail, lineOf);
  const org = top.get('org');
  if (org !== undefined) out.org = nameOf(org, 'org', fail, lineOf);
  const twins = top.get('twins');
  if (twins === undefined) fail(1, 'twins', 'missing: name the twins the world serves');
  if (!isMap(twins!.value)) fail(twins!.line, 'twins', 'must be a map from vendor id to the twin (docs/world-file.md)');
  const realDir = realpathSync(dir);
  const inside = (raw: unknown, field: string, line: number | undefined, must: 'file' | 'folder' | 'either' | 'maybe'): DeclaredPath => {
    if (!isScalar(raw) || typeof raw.value !== 'string' || raw.value.trim() === '') fail(line, field, 'must be a path, relative to the world file');
    const written = (raw as { value: string }).value;
    const at = lineOf(raw) ?? line ?? 1;
    if (isAbsolute(written)) fail(at, field, `"${written}" is absolute; write it relative to the world file's folder`);
    const path = resolve(dir, written);
    if (outside(dir, path)) fail(at, field, `"${written}" is outside the world file's folder ${dir}`);
    // Through symbolic links too: the nearest part of the path that exists, as the system resolves it.
    let existing = path;
    while (!existsSync(existing) && existing !== dir) existing = dirname(existing);
    let real: string;
    try {
      real = realpathSync(existing);
    } catch {
      real = existing; // a dangling link: its target is refused below as missing
    }
    if (outside(realDir, real)) fail(at, field, `"${written}" leads outside the world file's folder ${dir} (through a symbolic link)`);
    if (must !== 'maybe') {
      const info = statOrNull(path);
      if (info === null) fail(at, field, `"${written}" does not exist`);
      if (must === 'file' && !info!.isFile()) fail(at, field, `"${written}" is not a file`);
      if (must === 'folder' && !info!.isDirectory()) fail(at, field, `"${written}" is not a folder`);
    }
    return { path, written, line: at };
  };
  const checkNames = new Map<string, string>();
  for (const [vendor, { value, line }] of entries(twins!.value as Parameters<typeof entries>[0], 'twins', fail, lineOf)) {
    const field = `twins.${vendor}`;
    if (!VENDOR_ID.test(vendor)) fail(line, field, `"${vendor}" is not a vendor id (${VENDOR_ID.source})`);
    const twin: WorldFileTwin = { vendor, line, kind: 'builtin', checks: [] };
    if (value !== null && value !== undefined && !(isScalar(value) && value.value === null)) {
      if (!isMap(value)) fail(line, field, `must be a map (${TWIN_KEYS.join(', ')}) or nothing (a built-in twin)`);
      const keys = entries(value as Parameters<typeof entries>[0], field, fail, lineOf);
      for (const [key, k] of keys) if (!TWIN_KEYS.includes(key)) fail(k.line, `${field}.${key}`, `unknown key (a twin has: ${TWIN_KEYS.join(', ')})`);
      const path = keys.get('path');
      const component = keys.get('component');
      if (path !== undefined && component !== undefined) fail(component.line, `${field}.component`, 'a twin is built from `path` or loaded from `component`, not both');
      if (path !== undefined) {
        const declared = inside(path.value, `${field}.path`, path.line, 'either');
        twin.kind = 'path';
        twin.entry = { ...declared, ...entryOf(declared, `${field}.path`, fail) };
      }
      if (component !== undefined) {
        twin.kind = 'component';
        twin.component = inside(component.value, `${field}.component`, component.line, 'file');
      }
      const scenario = keys.get('scenario');
      if (scenario !== undefined) {
        twin.scenario = inside(scenario.value, `${field}.scenario`, scenario.line, 'maybe');
        if (!['.yaml', '.yml', '.json'].includes(extname(twin.scenario.path).toLowerCase())) {
          fail(twin.scenario.line, `${field}.scenario`, `"${twin.scenario.written}" must end in .yaml, .yml or .json (its format)`);
        }
        if (statOrNull(twin.scenario.path)?.isDirectory()) fail(twin.scenario.line, `${field}.scenario`, `"${twin.scenario.written}" is a folder`);
      }
      const checks = keys.get('checks');
      if (checks !== undefined) {
        if (!isSeq(checks.value)) fail(checks.line, `${field}.checks`, 'must be a list of check files');
        (checks.value as { items: unknown[] }).items.forEach((item, i) => {
          const declared = inside(item, `${field}.checks[${i}]`, lineOf(item) ?? checks.line, 'file');
          const name = basename(declared.path).replace(/\.m?js$/i, '');
          if (!CHECK_NAME.test(name)) fail(declared.line, `${field}.checks[${i}]`, `a check is named by its file name, and "${name}" is not a check name (${CHECK_NAME.source})`);
          const before = checkNames.get(name);
          if (before !== undefined) fail(declared.line, `${field}.checks[${i}]`, `a check named "${name}" is already ${before}: a check is named by its file name`);
          checkNames.set(name, declared.written);
          twin.checks.push({ ...declared, name });
        });
      }
    }
    out.twins.push(twin);
  }
  const scenarioFiles = new Map<string, string>();
  for (const t of out.twins) {
    if (t.scenario === undefined) continue;
    const other = scenarioFiles.get(t.scenario.path);
    if (other !== undefined) fail(t.scenario.line, `twins.${t.vendor}.scenario`, `"${t.scenario.written}" is already twin ${other}'s scenario file`);
    scenarioFiles.set(t.scenario.path, t.vendor);
  }
  return out;
}

type Fail = (line: number | undefined, field: string, problem: string) => never;

/** A map's entries by key, each with its value node and the line of its key; a key given twice is refused. */
function entries(map: { items: Pair[] }, field: string, fail: Fail, lineOf: (n: unknown) => number | undefined): Map<string, { value: unknown; line: number }> {
  const out = new Map<string, { value: unknown; line: number }>();
  for (const pair of map.items) {
    const line = lineOf(pair.key) ?? 1;
    if (!isScalar(pair.key) || (typeof pair.key.value !== 'string' && typeof pair.key.value !== 'number')) fail(line, field, 'keys are names');
    const key = String((pair.key as { value: unknown }).value);
    const path = field === '' ? key : `${field}.${key}`;
    const before = out.get(key);
    if (before !== undefined) {
      fail(line, path, field === 'twins' ? `a second twin for vendor "${key}" (the first is on line ${before.line}): one twin per vendor id` : `given twice (first on line ${before.line})`);
    }
    out.set(key, { value: pair.value, line });
  }
  return out;
}

function nameOf(entry: { value: unknown; line: number }, field: string, fail: Fail, lineOf: (n: unknown) => number | undefined): string {
  const v = entry.value;
  if (!isScalar(v) || typeof v.value !== 'string' || !NAME.test(v.value)) {
    fail(lineOf(v) ?? entry.line, field, `must be lower-case letters, digits and dashes (${NAME.source})`);
  }
  return (v as { value: string }).value;
}

/** A `path` twin's entry: the file itself, or a folder's `twin/index.ts` (the twin shape) or `index.ts`. */
function entryOf(declared: DeclaredPath, field: string, fail: Fail): { path: string; folder: string } {
  const info = statOrNull(declared.path);
  if (info?.isFile()) return { path: declared.path, folder: dirname(declared.path) };
  for (const candidate of [join('twin', 'index.ts'), 'index.ts', join('twin', 'index.js'), 'index.js']) {
    const path = join(declared.path, candidate);
    if (statOrNull(path)?.isFile()) return { path, folder: declared.path };
  }
  return fail(declared.line, field, `"${declared.written}" holds no twin/index.ts (nor index.ts): name the twin's folder or its entry file`);
}

function outside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel);
}

function statOrNull(path: string): ReturnType<typeof statSync> | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}
