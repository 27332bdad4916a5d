/**
 * A twin's state moved between worlds, and between hosts: exported as files keyed
 * `.kit/world/<twin>/<file>` → text (`{ twin, files }`, what `kit world export` writes and
 * `PUT /-/worlds/<org>/<world>/import` takes), and placed into a world whose log of that twin
 * is empty. The format, its limits and what it leaves out are in docs/export.md.
 *
 * Every host uses these (the single-world server's export endpoint, the CLI reading a stopped
 * world's store, the multi-world host's and the edge's import), so nothing here is Node's own:
 * the engine (`World`), the storage interface, and the runner's own key for a scenario.
 *
 * An import is checked whole before anything is written (`parseTwinFiles` needs no world at
 * all), then placed in one synchronous run (`placeTwinFiles`): the log in one transaction, the
 * scenario and the clock right after, with nothing left to refuse between them. On LMDB a
 * turn's transactions are committed together; a Durable Object coalesces the writes of one
 * event the same way.
 */
import { KitError } from '../errors.js';
import { parseScenario } from '../scenario/index.js';
import type { Storage } from '../store/types.js';
import { checkDraft, checkTwinName, formatInstant, parseInstant, type ClockState, type Entry, type EntryCause, type EntryDraft, type World } from '../world/index.js';
import type { StoredScenario } from './services.js';
import { scenarioKey } from './state.js';

/** The version of the format this runtime writes and reads (in `twin.json` and `clock.json`). */
export const EXPORT_FORMAT_VERSION = 1;
/** At most this many bytes (UTF-8) in one file of an import (a twin's log, chiefly). */
export const MAX_IMPORT_FILE_BYTES = 8 * 1024 * 1024;
/** At most this many bytes (UTF-8) in all the files of one import. */
export const MAX_IMPORT_BYTES = 16 * 1024 * 1024;

/** Where every file of an export lives. */
export const STATE_ROOT = '.kit/world/';
/** The world's clock, carried with every twin's export. */
export const CLOCK_FILE = `${STATE_ROOT}clock.json`;
/** The files of one twin, by the name of their kind. */
const TWIN_FILES = { twin: 'twin.json', log: 'log.jsonl', scenario: 'scenario.json' } as const;
type TwinFileKind = keyof typeof TWIN_FILES;

/** A file of a twin: `.kit/world/<twin>/<file>`. */
export function twinFilePath(twin: string, kind: TwinFileKind): string {
  return `${STATE_ROOT}${twin}/${TWIN_FILES[kind]}`;
}

/** One twin's state as files: the body of an import, what an export answers. */
export interface TwinFiles {
  twin: string;
  files: Record<string, string>;
}

/** What `twin.json` holds. */
interface TwinManifestFile {
  version: number;
  twin: string;
  /** How many entries `log.jsonl` holds (its lines). */
  entries: number;
  /** The world it was exported from (for people; an import does not read it). */
  world?: string;
}

/** An import checked whole: what `placeTwinFiles` writes. */
export interface TwinImport {
  twin: string;
  /** The entries as drafts stamped at their own instants, positions 1, 2, … in order. */
  drafts: EntryDraft[];
  /** The newest entry's instant (ms), or null for an empty log. */
  newestMs: number | null;
  scenario: StoredScenario | null;
  clock: ClockState | null;
}

/** What an import answers. */
export interface ImportSummary {
  twin: string;
  /** Entries placed. */
  entries: number;
  /** The twin's head after the import. */
  position: number;
  /** Whether a scenario was put in force. */
  scenario: boolean;
  /** The world's clock after the import. */
  clock: ClockState;
}

// ------------------------------------------------------------ export

/**
 * The twin's state as files: its whole log (a branch's includes its base's entries up to the
 * cut, read through), the scenario in force on it, and the world's clock. Refuses with
 * `export_too_large` (413) a log an import would refuse. Reads only.
 */
export function exportTwinFiles(storage: Storage, world: World, twin: string): TwinFiles {
  const head = world.head(twin);
  const lines: string[] = [];
  let bytes = 0;
  for (let after = 0; after < head; ) {
    const page = world.log(twin, { after, limit: 1000 });
    for (const entry of page.entries) {
      const line = entryLine(twin, entry);
      bytes += utf8Length(line) + 1;
      if (bytes > MAX_IMPORT_FILE_BYTES) {
        throw new KitError('export_too_large', `${twin}'s log is over ${MAX_IMPORT_FILE_BYTES} bytes by entry ${entry.position} of ${head}: more than one import takes`, { limit: MAX_IMPORT_FILE_BYTES });
      }
      lines.push(line);
    }
    if (page.next === null || page.entries.length === 0) break;
    after = page.next;
  }
  const manifest: TwinManifestFile = { version: EXPORT_FORMAT_VERSION, twin, entries: lines.length, world: world.name };
  const clock = world.clock();
  const files: Record<string, string> = {
    [CLOCK_FILE]: `${JSON.stringify({ version: EXPORT_FORMAT_VERSION, at: clock.at, frozen: clock.frozen })}\n`,
    [twinFilePath(twin, 'twin')]: `${JSON.stringify(manifest)}\n`,
    [twinFilePath(twin, 'log')]: lines.length === 0 ? '' : `${lines.join('\n')}\n`,
  };
  const scenario = storage.get<StoredScenario>(scenarioKey(world.name, twin));
  if (scenario !== undefined) {
    files[twinFilePath(twin, 'scenario')] = `${JSON.stringify({ source: scenario.source, format: scenario.format, updatedAt: scenario.updatedAt })}\n`;
  }
  return { twin, files };
}

/**
 * An entry as one line of JSON. Entries hold JSON by construction (a twin's writes and events
 * cross the sandbox as JSON; bytes a twin keeps are base64 in its records), so JSON carries
 * them exactly; anything else is the runtime's bug, refused rather than carried altered.
 */
function entryLine(twin: string, entry: Entry): string {
  const odd = notJson(entry, '');
  if (odd !== null) throw new KitError('internal', `entry ${entry.position} of ${twin} holds ${odd}, which JSON would not carry as it is`);
  return JSON.stringify(entry);
}

/** Where a value holds something JSON would change (undefined, a non-finite number, bytes, a Map, …), or null. */
function notJson(value: unknown, at: string): string | null {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return null;
    case 'number':
      // -0 is written 0: nothing that reads a record through JSON (every reader does) tells them apart.
      return Number.isFinite(value) ? null : `the number ${String(value)} at ${at || '/'}`;
    case 'object': {
      if (value === null) return null;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const odd = notJson(value[i], `${at}/${i}`);
          if (odd !== null) return odd;
        }
        return null;
      }
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) return `a ${(value as object).constructor?.name ?? 'non-plain object'} at ${at || '/'}`;
      for (const [k, v] of Object.entries(value)) {
        // An optional field left undefined is simply not there, as JSON writes it.
        if (v === undefined && at === '') continue;
        const odd = notJson(v, `${at}/${k}`);
        if (odd !== null) return odd;
      }
      return null;
    }
    default:
      return `${typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`} at ${at || '/'}`;
  }
}

// ------------------------------------------------------------ import: checking

function invalid(message: string, details?: Record<string, unknown>): KitError {
  return new KitError('invalid_import', message, details);
}

/** A path as a message shows it: short, control characters escaped. */
function shown(path: string): string {
  const cut = path.length > 120 ? `${path.slice(0, 120)}…` : path;
  return JSON.stringify(cut);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** UTF-8 length of a string, as TextEncoder would write it (a lone surrogate as U+FFFD). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** Which file of the import `path` is, or invalid_import: only the files of an export, only of `twin`. */
function kindOf(path: string, twin: string): TwinFileKind | 'clock' {
  const parts = path.split('/');
  if (!path.startsWith(STATE_ROOT) || parts.some((p) => p === '' || p === '.' || p === '..') || path.includes('\\')) {
    throw invalid(`${shown(path)} is not a file under ${STATE_ROOT}: an import places .kit/world/<twin>/<file> and ${CLOCK_FILE}, nothing else`, { path });
  }
  if (path === CLOCK_FILE) return 'clock';
  const [, , owner, file, ...more] = parts;
  if (owner !== twin) throw invalid(`${shown(path)} is not a file of ${twin}: one import places one twin's files`, { path });
  const kind = (Object.keys(TWIN_FILES) as TwinFileKind[]).find((k) => TWIN_FILES[k] === file);
  if (kind === undefined || more.length > 0) {
    throw invalid(`${shown(path)} is no file of an export: a twin has ${Object.values(TWIN_FILES).join(', ')}`, { path });
  }
  return kind;
}

function jsonFile(path: string, text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid(`${path} is not JSON`, { path });
  }
  if (!isObject(value)) throw invalid(`${path} is not a JSON object`, { path });
  return value;
}

function onlyFields(path: string, value: Record<string, unknown>, known: readonly string[]): void {
  for (const k of Object.keys(value)) if (!known.includes(k)) throw invalid(`${path}: unknown field ${shown(k)}; the fields are ${known.join(', ')}`, { path });
}

function checkVersion(path: string, version: unknown): void {
  if (version !== EXPORT_FORMAT_VERSION) {
    throw invalid(`${path} is of format version ${JSON.stringify(version) ?? 'none'}; this runtime reads version ${EXPORT_FORMAT_VERSION}`, { path });
  }
}

/** An instant as the engine writes one (`2026-01-01T00:00:00.000Z`): its ms. */
function canonicalInstant(value: unknown, where: string, details: Record<string, unknown>): number {
  let ms: number;
  try {
    ms = parseInstant(value);
  } catch {
    throw invalid(`${where} is not an instant`, details);
  }
  if (formatInstant(ms) !== value) throw invalid(`${where} is not an instant as the engine writes one (${formatInstant(ms)})`, details);
  return ms;
}

/** The fields of each kind of cause, as the runtime writes them (runtime/world/types.ts `EntryCause`). */
const CAUSE_FIELDS: Record<EntryCause['kind'], Record<string, 'string' | 'status' | 'count' | 'boolean'>> = {
  request: { method: 'string', route: 'string', path: 'string', status: 'status', requestId: 'string' },
  move: { move: 'string', dueAt: 'string' },
  ingest: { source: 'string' },
  refresh: {},
  push: { changeset: 'string', change: 'count', method: 'string', route: 'string', path: 'string', status: 'status' },
  pull: { origin: 'string', through: 'count', merged: 'boolean' },
  system: { reason: 'string' },
};

const FIELD_TYPES = { string: 'a string', status: 'a status, 100 to 599', count: 'a whole number', boolean: 'true or false' };

function checkCause(cause: unknown, details: Record<string, unknown>): EntryCause {
  const where = `the cause of entry ${String(details['position'])}`;
  if (!isObject(cause) || typeof cause['kind'] !== 'string' || !Object.hasOwn(CAUSE_FIELDS, cause['kind'])) {
    throw invalid(`${where} is not { kind, … } with a kind of ${Object.keys(CAUSE_FIELDS).join(', ')}`, details);
  }
  const fields = CAUSE_FIELDS[cause['kind'] as EntryCause['kind']];
  for (const k of Object.keys(cause)) {
    if (k !== 'kind' && !Object.hasOwn(fields, k)) throw invalid(`${where}: a ${cause['kind']} cause has no field ${shown(k)}`, details);
  }
  for (const [k, type] of Object.entries(fields)) {
    const v = cause[k];
    const ok =
      type === 'string' ? typeof v === 'string'
      : type === 'boolean' ? typeof v === 'boolean'
      : type === 'count' ? Number.isSafeInteger(v) && (v as number) >= 0
      : Number.isInteger(v) && (v as number) >= 100 && (v as number) <= 599;
    if (!ok) throw invalid(`${where}: ${k} is ${FIELD_TYPES[type]}`, details);
  }
  return cause as unknown as EntryCause;
}

const ENTRY_FIELDS = ['position', 'occurredAt', 'cause', 'writes', 'events', 'traceparent'];

/** The entries of `log.jsonl`, as drafts stamped at their own instants. */
function readLog(path: string, text: string): { drafts: EntryDraft[]; newestMs: number | null } {
  const drafts: EntryDraft[] = [];
  let newest: number | null = null;
  if (text === '') return { drafts, newestMs: null };
  if (!text.endsWith('\n')) throw invalid(`${path} does not end with a newline: it was cut short`, { path });
  const lines = text.slice(0, -1).split('\n');
  lines.forEach((line, i) => {
    const details = { path, line: i + 1, position: i + 1 };
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      throw invalid(`${path}, line ${i + 1}, is not JSON`, details);
    }
    if (!isObject(entry)) throw invalid(`${path}, line ${i + 1}, is not an entry (a JSON object)`, details);
    for (const k of Object.keys(entry)) if (!ENTRY_FIELDS.includes(k)) throw invalid(`${path}, line ${i + 1}: an entry has no field ${shown(k)}`, details);
    if (entry['position'] !== i + 1) {
      throw invalid(`${path}, line ${i + 1}, holds position ${JSON.stringify(entry['position']) ?? 'none'}: the positions go 1, 2, 3, … with no gap`, details);
    }
    const ms = canonicalInstant(entry['occurredAt'], `the occurredAt of entry ${i + 1}`, details);
    if (newest !== null && ms < newest) {
      throw invalid(`entry ${i + 1} occurred at ${formatInstant(ms)}, before entry ${i} (${formatInstant(newest)}): a log never goes back in time`, details);
    }
    newest = ms;
    const cause = checkCause(entry['cause'], details);
    let draft: EntryDraft;
    try {
      draft = checkDraft({ cause, writes: entry['writes'], events: entry['events'], traceparent: entry['traceparent'], occurredAt: entry['occurredAt'] });
    } catch (e) {
      if (e instanceof KitError) throw invalid(`entry ${i + 1}: ${e.message}`, details);
      throw e;
    }
    drafts.push(draft);
  });
  return { drafts, newestMs: newest };
}

function readScenario(path: string, text: string): StoredScenario {
  const value = jsonFile(path, text);
  onlyFields(path, value, ['source', 'format', 'updatedAt']);
  const { source, format, updatedAt } = value;
  if (typeof source !== 'string' || (format !== 'json' && format !== 'yaml')) throw invalid(`${path} is { source, format: json or yaml, updatedAt }`, { path });
  canonicalInstant(updatedAt, `${path}'s updatedAt`, { path });
  try {
    parseScenario(source, format === 'json' ? 'application/json' : 'application/yaml');
  } catch (e) {
    if (e instanceof KitError && e.code === 'body_too_large') throw new KitError('import_too_large', `${path}: ${e.message}`, { path });
    if (e instanceof KitError) throw invalid(`${path} is no scenario this runtime puts in force: ${e.message}`, { path });
    throw e;
  }
  return { source, format, updatedAt: updatedAt as string };
}

function readClock(text: string): ClockState {
  const value = jsonFile(CLOCK_FILE, text);
  onlyFields(CLOCK_FILE, value, ['version', 'at', 'frozen']);
  checkVersion(CLOCK_FILE, value['version']);
  if (typeof value['frozen'] !== 'boolean') throw invalid(`${CLOCK_FILE}: frozen is true or false`, { path: CLOCK_FILE });
  canonicalInstant(value['at'], `${CLOCK_FILE}'s at`, { path: CLOCK_FILE });
  return { at: value['at'] as string, frozen: value['frozen'] };
}

/**
 * Checks an import's body whole — `{ twin, files }`: paths only of an export, sizes within the
 * limits, every file's shape, the log's positions 1, 2, … and instants never going back —
 * and answers what to place. invalid_import (400) or import_too_large (413); needs no world.
 */
export function parseTwinFiles(body: unknown): TwinImport {
  if (!isObject(body)) throw invalid('an import is { twin, files }');
  onlyFields('the import', body, ['twin', 'files']);
  let twin: string;
  try {
    twin = checkTwinName(body['twin']);
  } catch {
    throw invalid('twin is a twin name (1 to 64 of a-z 0-9 _ - starting with a letter or digit)', { param: 'twin' });
  }
  const files = body['files'];
  if (!isObject(files)) throw invalid('files is an object: path → content', { param: 'files' });
  const found = new Map<TwinFileKind | 'clock', string>();
  let total = 0;
  for (const [path, content] of Object.entries(files)) {
    const kind = kindOf(path, twin);
    if (typeof content !== 'string') throw invalid(`the content of ${path} is not a string`, { path });
    // A string's UTF-8 takes at least a byte per UTF-16 unit: a long one is refused unmeasured.
    const bytes = content.length > MAX_IMPORT_FILE_BYTES ? content.length : utf8Length(content);
    if (bytes > MAX_IMPORT_FILE_BYTES) throw new KitError('import_too_large', `${path} is over ${MAX_IMPORT_FILE_BYTES} bytes, the most one file of an import holds`, { path, limit: MAX_IMPORT_FILE_BYTES });
    total += bytes;
    if (total > MAX_IMPORT_BYTES) throw new KitError('import_too_large', `the files are over ${MAX_IMPORT_BYTES} bytes, the most one import holds`, { limit: MAX_IMPORT_BYTES });
    found.set(kind, content);
  }
  const manifestText = found.get('twin');
  const logText = found.get('log');
  if (manifestText === undefined || logText === undefined) {
    throw invalid(`an import of ${twin} holds ${twinFilePath(twin, 'twin')} and ${twinFilePath(twin, 'log')}`, { param: 'files' });
  }
  const manifestPath = twinFilePath(twin, 'twin');
  const manifest = jsonFile(manifestPath, manifestText);
  onlyFields(manifestPath, manifest, ['version', 'twin', 'entries', 'world']);
  checkVersion(manifestPath, manifest['version']);
  if (manifest['twin'] !== twin) throw invalid(`${manifestPath} names the twin ${JSON.stringify(manifest['twin']) ?? 'none'}, not ${twin}`, { path: manifestPath });
  if (manifest['world'] !== undefined && typeof manifest['world'] !== 'string') throw invalid(`${manifestPath}: world is a string`, { path: manifestPath });
  const log = readLog(twinFilePath(twin, 'log'), logText);
  if (manifest['entries'] !== log.drafts.length) {
    throw invalid(`${manifestPath} says ${JSON.stringify(manifest['entries']) ?? 'nothing of'} entries and the log holds ${log.drafts.length}: a file is missing lines`, { path: manifestPath });
  }
  const scenarioText = found.get('scenario');
  const clockText = found.get('clock');
  const clock = clockText === undefined ? null : readClock(clockText);
  if (clock !== null && clock.frozen && log.newestMs !== null && parseInstant(clock.at) < log.newestMs) {
    throw invalid(`${CLOCK_FILE} is at ${clock.at}, before the log's newest entry (${formatInstant(log.newestMs)}): a clock never runs behind its entries`, { path: CLOCK_FILE });
  }
  return {
    twin,
    drafts: log.drafts,
    newestMs: log.newestMs,
    scenario: scenarioText === undefined ? null : readScenario(twinFilePath(twin, 'scenario'), scenarioText),
    clock,
  };
}

// ------------------------------------------------------------ import: placing

export interface PlaceOptions {
  /** Whether the twin takes a scenario (its manifest's `scenarios`); default true. A scenario for one that takes none is invalid_import. */
  takesScenario?: boolean;
}

/**
 * Places a checked import into `world`: its entries at positions 1, 2, … with their instants,
 * causes, writes and events, so the tree, counts, history cuts, checkpoints and diffs are the
 * source's; the scenario put in force (kept where the runner reads it when it opens); the clock
 * set when the export's was (an unset one leaves this world's as it is). Refused before
 * anything is written: unknown_twin (404), twin_not_empty (409: the twin's log holds entries),
 * clock_backward (409: this world's clock or another twin's newest entry is later than the
 * export's clock, or its set clock is earlier than the twin's newest entry).
 *
 * The world's runner must not be open meanwhile (it keeps the scenario in force in memory):
 * close it first, or place through it.
 */
export function placeTwinFiles(storage: Storage, world: World, parsed: TwinImport, options: PlaceOptions = {}): ImportSummary {
  const { twin } = parsed;
  if (!world.twins().includes(twin)) throw new KitError('unknown_twin', `world ${world.name} has no twin ${twin}: make it with ${twin} among its vendors`, { param: 'twin' });
  const head = world.head(twin);
  if (head > 0) {
    throw new KitError('twin_not_empty', `${twin}'s log in ${world.name} holds ${head} entries: an import places a twin whose log is empty (make the world anew, or import into another)`, { position: head });
  }
  if (parsed.scenario !== null && options.takesScenario === false) {
    throw invalid(`${twin} takes no scenario, and the import holds ${twinFilePath(twin, 'scenario')}`, { path: twinFilePath(twin, 'scenario') });
  }
  const current = world.clock();
  if (parsed.clock !== null && parsed.clock.frozen) {
    const atMs = parseInstant(parsed.clock.at);
    if (current.frozen && parseInstant(current.at) > atMs) {
      throw new KitError('clock_backward', `${world.name}'s clock is at ${current.at}, after the export's (${parsed.clock.at}); it does not move back: leave ${CLOCK_FILE} out to keep it`, { param: 'files' });
    }
    for (const other of world.twins()) {
      const newest = world.entry(other, world.head(other));
      if (newest !== undefined && parseInstant(newest.occurredAt) > atMs) {
        throw new KitError('clock_backward', `${other}'s newest entry is at ${newest.occurredAt}, after the export's clock (${parsed.clock.at}); leave ${CLOCK_FILE} out to keep the world's clock`, { param: 'files' });
      }
    }
  } else if (current.frozen && parsed.newestMs !== null && parseInstant(current.at) < parsed.newestMs) {
    throw new KitError('clock_backward', `${world.name}'s clock is at ${current.at}, before ${twin}'s newest entry (${formatInstant(parsed.newestMs)}): set it later first`, { param: 'files' });
  }

  // Nothing below refuses: the drafts were checked as the engine checks them, the log is empty,
  // and the clock may move where it is set.
  if (parsed.drafts.length > 0) world.appendBatch(twin, parsed.drafts);
  if (parsed.scenario !== null) storage.transact((tx) => tx.put(scenarioKey(world.name, twin), parsed.scenario));
  if (parsed.clock !== null && parsed.clock.frozen) world.setClock(parsed.clock.at);
  return { twin, entries: parsed.drafts.length, position: world.head(twin), scenario: parsed.scenario !== null, clock: world.clock() };
}

/** `parseTwinFiles` then `placeTwinFiles`: an import checked whole, then placed. */
export function importTwinFiles(storage: Storage, world: World, body: unknown, options: PlaceOptions = {}): ImportSummary {
  return placeTwinFiles(storage, world, parseTwinFiles(body), options);
}
