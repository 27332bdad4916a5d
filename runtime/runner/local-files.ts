/**
 * A local world's colocated files (docs/world-file.md): the scenario and check files its world
 * file declares, kept in the app's repository. Each is put in force at start and read again
 * when it changes: a watcher reads it as soon as the editor writes it, and every request first
 * compares each file's size and time with the last read (a few `stat`s), so an edit is in force
 * on the next request even before the watcher's event arrives. A twin's `PUT …/scenario` writes
 * its file (`ScenarioFiles`). A file that cannot be read or is refused is reported with its path
 * and line, and what was in force stays in force.
 */
import { watch, mkdirSync, readFileSync, rmSync, statSync, writeFileSync, type FSWatcher, type Stats } from 'node:fs';
import { basename, dirname, extname, relative } from 'node:path';
import { isMap, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { isKitError } from '../errors.js';
import type { ScenarioFiles, ScenarioFileState } from './scenarios.js';
import type { ColocatedFiles } from './types.js';
import type { WorldRunner } from './world-runner.js';

/** What a file held when last read: its stat signature and text (null: absent). */
interface Seen {
  signature: string;
  text: string | null;
}

type Problem = NonNullable<ScenarioFileState['problem']>;

/** The largest colocated file read (a scenario takes at most 4 MB as JSON). */
const MAX_FILE_BYTES = 4 * 1024 * 1024;

export class LocalWorldFiles {
  private runner: WorldRunner | null = null;
  private readonly seen = new Map<string, Seen>();
  private readonly problems = new Map<string, Problem>();
  private readonly watched = new Map<string, FSWatcher>();
  private running: Promise<void> | null = null;
  private closed = false;

  /**
   * @param files the declared files, absolute
   * @param base the world file's folder: paths in messages are written relative to it
   * @param report one line per problem or change, for a person (the CLI's standard error)
   * @param fallback where a twin the world file gives no scenario file keeps its scenario
   */
  constructor(
    private readonly files: ColocatedFiles,
    private readonly base: string,
    private readonly report: (line: string) => void,
    private readonly fallback: ScenarioFiles,
  ) {}

  /** The runner's `ScenarioFiles`: a declared twin's file, else the fallback folder. */
  scenarioFiles(): ScenarioFiles {
    return {
      write: (vendor, format, source) => {
        const path = this.files.scenarios[vendor];
        if (path === undefined) return this.fallback.write(vendor, format, source);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, source);
        this.remember(path, source);
        this.watchFolder(dirname(path));
      },
      remove: (vendor) => {
        const path = this.files.scenarios[vendor];
        if (path === undefined) return this.fallback.remove(vendor);
        rmSync(path, { force: true });
        this.remember(path, null);
      },
      declared: (vendor) => {
        const path = this.files.scenarios[vendor];
        if (path === undefined) return null;
        return { path: this.shown(path), problem: this.problems.get(path) ?? null };
      },
    };
  }

  /** Puts every declared file in force (over what the world had stored) and starts watching. */
  async start(runner: WorldRunner): Promise<void> {
    this.runner = runner;
    await this.sync(true);
    for (const path of this.paths()) this.watchFolder(dirname(path));
  }

  /**
   * Watches a folder of declared files: the folder, not the file, since editors replace a file
   * by renaming another over it. A folder that does not exist yet (a scenario no PUT has
   * written) is watched once a PUT makes it; until then the per-request check reads it.
   */
  private watchFolder(folder: string): void {
    if (this.closed || this.watched.has(folder)) return;
    const names = new Set(this.paths().filter((p) => dirname(p) === folder).map((p) => basename(p)));
    try {
      const watcher = watch(folder, (_event, name) => {
        if (name === null || names.has(String(name))) void this.sync();
      });
      watcher.on('error', () => {
        // The folder removed: the per-request check still reads its files.
        watcher.close();
        this.watched.delete(folder);
      });
      this.watched.set(folder, watcher);
    } catch {
      // Not there yet.
    }
  }

  /**
   * Before a request: reads again whatever changed since the last read. Answers nothing (at
   * once) when no file changed, which is what nearly every request sees.
   */
  beforeRequest(): Promise<void> | undefined {
    if (this.running === null && !this.paths().some((p) => this.seen.get(p)?.signature !== signatureOf(p))) return undefined;
    return this.sync();
  }

  close(): void {
    this.closed = true;
    for (const w of this.watched.values()) w.close();
    this.watched.clear();
  }

  private paths(): string[] {
    return [...Object.values(this.files.scenarios), ...this.files.checks.map((c) => c.path)];
  }

  private shown(path: string): string {
    return relative(this.base, path) || path;
  }

  private remember(path: string, text: string | null): void {
    this.seen.set(path, { signature: signatureOf(path), text });
    this.problems.delete(path);
  }

  /** One read of every file at a time; a call while one runs waits for it and then reads again. */
  private sync(starting = false): Promise<void> {
    const next = (this.running ?? Promise.resolve()).then(() => this.syncAll(starting));
    const settled = next.finally(() => {
      if (this.running === settled) this.running = null;
    });
    this.running = settled;
    return settled;
  }

  private async syncAll(starting: boolean): Promise<void> {
    const runner = this.runner;
    if (runner === null || this.closed) return;
    for (const [vendor, path] of Object.entries(this.files.scenarios)) {
      const text = this.readIfChanged(path);
      if (text === undefined) continue;
      const twin = runner.twins.get(vendor);
      if (twin === undefined) continue;
      await runner.exclusive(vendor, async () => {
        if (text === null) {
          if (runner.scenarios.inForce(twin) === null) return;
          await runner.scenarios.delete(twin, true);
          this.report(`kit: ${this.shown(path)} is gone: twin ${vendor} has no scenario in force`);
          return;
        }
        if (runner.scenarios.holds(vendor, text)) return;
        try {
          const slot = await runner.scenarios.put(twin, text, extname(path).toLowerCase() === '.json' ? 'application/json' : 'application/yaml', true);
          if (!starting) this.report(`kit: ${this.shown(path)} read again: ${slot.scenario.handlers.length} handler${slot.scenario.handlers.length === 1 ? '' : 's'} in force on ${vendor}`);
        } catch (e) {
          this.refused(path, e, text, runner.scenarios.inForce(twin) !== null ? 'the scenario in force is kept' : 'no scenario is in force');
        }
      });
    }
    for (const check of this.files.checks) {
      const text = this.readIfChanged(check.path);
      if (text === undefined) continue;
      let inForce: string | null = null;
      try {
        inForce = runner.checks.get(check.name).source;
      } catch {
        // Not in force yet.
      }
      if (text === null) {
        if (inForce === null) continue;
        await runner.checks.delete(check.name);
        this.report(`kit: ${this.shown(check.path)} is gone: the check ${check.name} no longer runs`);
        continue;
      }
      if (inForce === text) continue;
      try {
        await runner.checks.put(check.name, text);
        if (!starting) this.report(`kit: ${this.shown(check.path)} read again: the check ${check.name} is in force`);
      } catch (e) {
        this.refused(check.path, e, text, inForce !== null ? 'the check in force is kept' : 'the check does not run');
      }
    }
  }

  /** The file's text when it changed since the last read (null: it is gone), undefined when it did not or cannot be read. */
  private readIfChanged(path: string): string | null | undefined {
    const signature = signatureOf(path);
    const seen = this.seen.get(path);
    if (seen !== undefined && seen.signature === signature) return undefined;
    let text: string | null;
    try {
      const info = statSync(path);
      if (!info.isFile()) throw new Error('not a regular file');
      if (info.size > MAX_FILE_BYTES) throw new Error(`${info.size} bytes; at most ${MAX_FILE_BYTES} are read`);
      text = readFileSync(path, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') text = null;
      else {
        this.seen.set(path, { signature, text: seen?.text ?? null });
        this.problem(path, { message: `cannot be read: ${code ?? (e as Error).message}` }, 'what was in force is kept');
        return undefined;
      }
    }
    this.seen.set(path, { signature, text });
    this.problems.delete(path);
    return text;
  }

  private refused(path: string, e: unknown, text: string, kept: string): void {
    const message = e instanceof Error ? e.message : String(e);
    const details = isKitError(e) ? e.details : undefined;
    let line = typeof details?.['line'] === 'number' ? details['line'] : undefined;
    if (line === undefined && typeof details?.['field'] === 'string') line = lineOfField(text, details['field']);
    this.problem(path, { message, ...(line !== undefined ? { line } : {}) }, kept);
  }

  private problem(path: string, problem: Problem, kept: string): void {
    this.problems.set(path, problem);
    this.report(`kit: ${this.shown(path)}${problem.line !== undefined ? `:${problem.line}` : ''}: ${problem.message} (${kept})`);
  }
}

/** Size, time and inode: a file written again, or renamed over, reads differently. */
function signatureOf(path: string): string {
  let info: Stats;
  try {
    info = statSync(path);
  } catch {
    return 'absent';
  }
  return `${info.size}:${info.mtimeMs}:${info.ino}`;
}

/**
 * The line of a document (YAML, or JSON, which YAML reads) that a field path such as
 * `handlers[2].respond.status` names: the deepest part of the path the document has. For a
 * document that does not parse, the line of its first error.
 */
export function lineOfField(text: string, field: string): number | undefined {
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, uniqueKeys: false });
  const error = doc.errors[0];
  if (error !== undefined) return counter.linePos(error.pos[0]).line;
  const parts = field.split(/\.|\[(\d+)\]/).filter((p) => p !== undefined && p !== '');
  let node: unknown = doc.contents;
  let line = lineAt(node, counter);
  for (const part of parts) {
    let next: unknown;
    if (isMap(node)) next = node.items.find((p) => String((p.key as { value?: unknown } | null)?.value ?? p.key) === part)?.value ?? undefined;
    else if (isSeq(node) && /^\d+$/.test(part)) next = node.items[Number(part)];
    if (next === undefined || next === null) {
      // A key whose value is empty names its own line.
      if (isMap(node)) {
        const pair = node.items.find((p) => String((p.key as { value?: unknown } | null)?.value ?? p.key) === part);
        const keyLine = lineAt(pair?.key, counter);
        if (keyLine !== undefined) line = keyLine;
      }
      break;
    }
    node = next;
    line = lineAt(node, counter) ?? line;
  }
  return line;
}

function lineAt(node: unknown, counter: LineCounter): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  if (!range) return undefined;
  return counter.linePos(range[0]).line;
}
