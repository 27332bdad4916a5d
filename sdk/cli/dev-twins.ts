/**
 * `kit world serve --dev`: each twin built from the app's sources (a world file's `path:`) is
 * watched, rebuilt on an edit, and swapped into the world (`replaceTwin`), so the next request
 * uses the new build. A build that fails is printed (file:line:column and message) and shown in
 * the twin's status (the world page's twin card); the last good build keeps serving.
 */
import { readdirSync, watch, type Dirent, type FSWatcher } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { TwinBuildProblem, TwinBundle } from '../../runtime/runner/types.js';

/** A twin from sources as `--dev` watches it. */
export interface DevTwin {
  vendor: string;
  /** The entry file built (absolute). */
  entry: string;
  /** The folder whose edits rebuild it (absolute), watched with its subfolders. */
  folder: string;
  /** Its `path:` as the world file writes it (the twin's status shows it). */
  path: string;
}

/** Where a rebuilt twin goes: the served world. */
export interface DevTarget {
  replaceTwin(bundle: TwinBundle): Promise<void>;
  twinBuildFailed(vendor: string, problem: TwinBuildProblem): void;
}

export interface DevWatch {
  close(): void;
  /** Resolves once every build started so far has finished (tests, the bench). */
  settled(): Promise<void>;
}

/** How long an edit waits for the rest of a save (editors write a file in several steps). */
const DEBOUNCE_MS = 15;
/** Folders never watched for a twin's sources. */
const IGNORED = /^(node_modules|\.git|\.kit)$/;

/**
 * Watches each twin's folder. `build` builds an entry into a bundle (`buildTwin`, marked
 * untrusted by the caller); `base` is the folder paths are printed relative to.
 */
export function watchTwinSources(twins: readonly DevTwin[], target: DevTarget, build: (twin: DevTwin) => Promise<TwinBundle>, report: (line: string) => void, base: string): DevWatch {
  const trees: WatchedTree[] = [];
  const pending = new Set<Promise<void>>();
  let closed = false;
  for (const twin of twins) {
    let timer: NodeJS.Timeout | null = null;
    let running: Promise<void> | null = null;
    let again = false;
    const rebuild = async (): Promise<void> => {
      const started = performance.now();
      let bundle: TwinBundle;
      try {
        bundle = await build(twin);
        if (bundle.vendor !== twin.vendor) throw new Error(`its manifest now names vendor "${bundle.vendor}"; the world file serves it as "${twin.vendor}"`);
        await target.replaceTwin(bundle);
      } catch (e) {
        if (closed) return;
        const problem = buildProblem(e, base);
        target.twinBuildFailed(twin.vendor, problem);
        report(`kit: twin ${twin.vendor} does not build: ${describeBuildProblem(problem)} (the last good build keeps serving)`);
        return;
      }
      if (!closed) report(`kit: twin ${twin.vendor} rebuilt in ${Math.round(performance.now() - started)} ms; the next request uses it`);
    };
    const start = (): void => {
      if (running !== null) {
        again = true;
        return;
      }
      const run: Promise<void> = rebuild().then(() => {
        running = null;
        pending.delete(run);
        if (again && !closed) {
          again = false;
          start();
        }
      });
      running = run;
      pending.add(run);
    };
    const tree = watchTree(twin.folder, () => {
      if (closed) return;
      if (timer !== null) clearTimeout(timer);
      timer = setTimeout(() => {
        timer = null;
        start();
      }, DEBOUNCE_MS);
    });
    if (tree.error !== null) report(`kit: cannot watch ${relative(base, twin.folder) || twin.folder} for twin ${twin.vendor}: ${tree.error}`);
    trees.push(tree);
  }
  return {
    close() {
      closed = true;
      for (const t of trees.splice(0)) t.close();
    },
    async settled() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
  };
}

interface WatchedTree {
  close(): void;
  /** Why the folder cannot be watched, or null. */
  error: string | null;
}

/**
 * Watches a folder and each folder below it, one watcher per folder (Node 20's recursive
 * watch on Linux loses a file an editor replaces by renaming another over it; a folder's
 * watcher does not). The folders are listed again after each change: a new one is watched.
 */
function watchTree(root: string, changed: () => void): WatchedTree {
  const watchers = new Map<string, FSWatcher>();
  let closed = false;
  const scan = (): string | null => {
    const folders: string[] = [];
    const walk = (dir: string, depth: number): void => {
      folders.push(dir);
      if (depth > 20) return;
      let names: Dirent[];
      try {
        names = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const d of names) if (d.isDirectory() && !IGNORED.test(d.name)) walk(join(dir, d.name), depth + 1);
    };
    walk(root, 0);
    for (const [dir, w] of watchers) {
      if (!folders.includes(dir)) {
        w.close();
        watchers.delete(dir);
      }
    }
    let error: string | null = null;
    for (const dir of folders) {
      if (watchers.has(dir)) continue;
      try {
        const w = watch(dir, (_event, name) => {
          if (closed || (name !== null && IGNORED.test(String(name)))) return;
          scan();
          changed();
        });
        w.on('error', () => {
          w.close();
          watchers.delete(dir);
        });
        watchers.set(dir, w);
      } catch (e) {
        if (dir === root) error = (e as Error).message;
      }
    }
    return error;
  };
  const error = scan();
  return {
    error,
    close() {
      closed = true;
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}

/**
 * What a failed build says, structured: where buildTwin's details put the first esbuild error
 * (its file, line, column from 1, and its own text, which may hold '; ' itself), else the
 * message alone.
 */
export function buildProblem(e: unknown, base: string): TwinBuildProblem {
  const details = (e as { details?: Record<string, unknown> } | null)?.details;
  const file = details?.['file'];
  const line = details?.['line'];
  const text = details?.['problem'];
  if (typeof file === 'string' && typeof line === 'number' && typeof text === 'string') {
    const absolute = isAbsolute(file) ? file : resolve(file);
    return { message: text.trim(), file: relative(base, absolute) || file, line, column: Number(details?.['column'] ?? 1) };
  }
  // `twin <entry>: ` prefixes every buildTwin error: the CLI names the twin itself.
  return { message: (e instanceof Error ? e.message : String(e)).replace(/^twin [^:]+: /, '') };
}

/** A build problem as one line: `file:line:column: message`. */
export function describeBuildProblem(problem: TwinBuildProblem): string {
  const where = problem.file !== undefined ? `${problem.file}${problem.line !== undefined ? `:${problem.line}:${problem.column ?? 1}` : ''}: ` : '';
  return `${where}${problem.message}`;
}
