/**
 * `kit host serve` in a child process of its own, so that its RSS is the host's alone:
 *
 *   node --expose-gc --import dist/bench/host/gc-signal.js dist/sdk/cli/kit.js host serve <dir> --port 0 <flags>
 *
 * Its URL is read from `<dir>/.kit-host/url` (removed first: a restart on the same directory
 * finds the last run's), its admin token from `<dir>/.kit-host/admin`; its memory from
 * /proc/<pid>/status, and after a forced collection from what gc-signal.ts writes on SIGUSR2.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

/** dist/bench/host/ → dist/. */
const DIST = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const KIT = join(DIST, 'sdk', 'cli', 'kit.js');
const GC_HOOK = join(DIST, 'bench', 'host', 'gc-signal.js');

export interface MemoryAfterGc {
  /** Whether the child ran with --expose-gc (false: no collection was forced). */
  collected: boolean;
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

export interface HostChild {
  readonly url: string;
  readonly admin: string;
  readonly pid: number;
  /** The command that started it (for the README). */
  readonly command: string;
  /**
   * Resident set now and its peak so far, in bytes (/proc/<pid>/status VmRSS, VmHWM), and the
   * resident set's anonymous and file-backed parts (RssAnon, RssFile: LMDB's map of its data
   * file is file-backed).
   */
  memory(): { rss: number; peak: number; anon: number; file: number };
  /**
   * CPU time used so far, in ms: the whole process (every thread, those that ended too) and its
   * main thread alone (/proc/<pid>/stat and /proc/<pid>/task/<pid>/stat, user + system).
   */
  cpu(): { totalMs: number; mainMs: number };
  /**
   * CPU time its live threads have used so far, ms, to the nanosecond (the sum of
   * /proc/<pid>/task/<tid>/schedstat of each thread): finer than cpu()'s 10 ms ticks, blind to threads that ended.
   */
  liveThreadsCpuMs(): number;
  /** The same, per live thread id. */
  threadsCpuMs(): Map<number, number>;
  /** A full collection in the child, then its process.memoryUsage(). */
  memoryAfterGc(): Promise<MemoryAfterGc>;
  /** SIGTERM (the host finishes in-flight requests and closes its worlds), then waits for it to exit. */
  stop(): Promise<void>;
}

/** Linux's USER_HZ is 100 on every architecture Node runs on. */
const MS_PER_TICK = 10;

const running = new Set<ChildProcess>();
// A bench that fails or is interrupted leaves no host behind.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startHostChild(dir: string, flags: readonly string[]): Promise<HostChild> {
  const state = join(dir, '.kit-host');
  const urlFile = join(state, 'url');
  const gcFile = join(state, 'bench-memory.json');
  rmSync(urlFile, { force: true });
  const args = ['--expose-gc', '--import', pathToFileURL(GC_HOOK).href, KIT, 'host', 'serve', dir, '--port', '0', ...flags];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KIT_BENCH_GC_FILE: gcFile } });
  running.add(child);
  let output = '';
  child.stdout?.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (output += b.toString()));
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => {
    exited = true;
    running.delete(child);
    resolve();
  }));
  const deadline = Date.now() + 60_000;
  while (!existsSync(urlFile)) {
    if (exited) throw new Error(`kit host serve exited before listening:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`kit host serve did not listen within 60 s:\n${output}`);
    }
    await sleep(50);
  }
  const url = readFileSync(urlFile, 'utf8').trim();
  const admin = (readFileSync(join(state, 'admin'), 'utf8').split('\n')[0] ?? '').trim();
  const pid = child.pid as number;
  const status = (field: string): number => {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`));
    if (line === undefined) throw new Error(`/proc/${pid}/status has no ${field}`);
    return Number(/(\d+)\s*kB/.exec(line)?.[1]) * 1024;
  };
  // Clock ticks of user + system time in a stat line (fields 14 and 15; the name in parentheses may hold spaces).
  const ticks = (path: string): number => {
    const line = readFileSync(path, 'utf8');
    const fields = line.slice(line.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  };
  const threadsCpuMs = (): Map<number, number> => {
    const threads = new Map<number, number>();
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        threads.set(Number(task), Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]) / 1e6);
      } catch {
        // the thread ended meanwhile
      }
    }
    return threads;
  };
  return {
    url,
    admin,
    pid,
    cpu: () => ({ totalMs: ticks(`/proc/${pid}/stat`) * MS_PER_TICK, mainMs: ticks(`/proc/${pid}/task/${pid}/stat`) * MS_PER_TICK }),
    threadsCpuMs,
    liveThreadsCpuMs: () => [...threadsCpuMs().values()].reduce((a, b) => a + b, 0),
    command: `node --expose-gc --import dist/bench/host/gc-signal.js dist/sdk/cli/kit.js host serve <dir> --port 0 ${flags.join(' ')}`.trim(),
    memory: () => ({ rss: status('VmRSS'), peak: status('VmHWM'), anon: status('RssAnon'), file: status('RssFile') }),
    async memoryAfterGc(): Promise<MemoryAfterGc> {
      rmSync(gcFile, { force: true });
      child.kill('SIGUSR2');
      const until = Date.now() + 30_000;
      while (!existsSync(gcFile)) {
        if (exited || Date.now() > until) throw new Error(`the host did not report its memory after SIGUSR2:\n${output}`);
        await sleep(20);
      }
      return JSON.parse(readFileSync(gcFile, 'utf8')) as MemoryAfterGc;
    },
    async stop(): Promise<void> {
      if (exited) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exit;
      clearTimeout(killer);
    },
  };
}
