/**
 * The two servers the edge bench compares, each as a user starts it by default, and what the
 * bench reads of their processes:
 *
 * - the edge variant: `startEdgeDev` (host/edge/dev.ts, what `kit edge dev` runs), the built
 *   Worker in workerd through miniflare. Miniflare spawns `workerd` as a child of this process;
 *   the bench finds it in /proc (its parent is this process, its name `workerd`) and reads its
 *   memory and CPU there. `restart()` starts another workerd process: the pid is found again.
 * - the single-world server: `dist/bench/http/server.js world` (bench/http's own server: a world
 *   served as `kit world serve` serves it, through the CLI's `serveWorld`), a child process.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { processCpuMs, startServerChild, statFields } from '../processes.js';
import { Miniflare } from 'miniflare';
import { EDGE_CONFIG, startEdgeDev, type EdgeDev } from '../../host/edge/dev.js';

/** dist/bench/edge/ → dist/. */
const DIST = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SINGLE_SERVER = join(DIST, 'bench', 'http', 'server.js');

/** The single-world server's token (server.ts writes it to the world's token file: `tok_` and 43 characters). */
export const SINGLE_TOKEN = 'tok_bench-0123456789abcdefghijklmnopqrstuvwxyzA';
/** The edge's admin token (24 to 256 URL-safe characters). */
export const ADMIN_TOKEN = `tok_a_bench_${'e'.repeat(32)}`;

export interface ProcessMemory {
  /** VmRSS, VmHWM (the peak), RssAnon, RssFile, in bytes. */
  rss: number;
  peak: number;
  anon: number;
  file: number;
}

/** A field of /proc/<pid>/status in bytes (the kB figures). */
function statusBytes(pid: number, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`));
  if (line === undefined) throw new Error(`/proc/${pid}/status has no ${field}`);
  return Number(/(\d+)\s*kB/.exec(line)?.[1]) * 1024;
}

export function processMemory(pid: number): ProcessMemory {
  return { rss: statusBytes(pid, 'VmRSS'), peak: statusBytes(pid, 'VmHWM'), anon: statusBytes(pid, 'RssAnon'), file: statusBytes(pid, 'RssFile') };
}

/** The pid of the newest `workerd` whose parent is this process (miniflare's) and not in `except`, or undefined. */
function newestWorkerd(except: ReadonlySet<number>): number | undefined {
  let newest: { pid: number; start: number } | undefined;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'workerd') continue;
      const f = statFields(pid);
      // [1] is the parent's pid, [19] the start time in ticks since boot; a zombie ([0] Z) is a stopped one.
      if (Number(f[1]) !== process.pid || f[0] === 'Z' || except.has(pid)) continue;
      const start = Number(f[19]);
      if (newest === undefined || start > newest.start) newest = { pid, start };
    } catch {
      // the process ended meanwhile
    }
  }
  return newest?.pid;
}

export interface EdgeUnderBench {
  readonly url: string;
  readonly admin: string;
  readonly dev: EdgeDev;
  /** The current workerd process (another after each restart). */
  pid(): number;
  memory(): ProcessMemory;
  cpuMs(): number;
  /** `EdgeDev.restart()` (workerd stopped and started again on the same port); answers the ms it took. */
  restart(): Promise<number>;
  close(): Promise<void>;
}

/** `startEdgeDev({ port: 0, adminToken, persist })`, as `kit edge dev [--persist dir]` starts it. */
export async function startEdge(persist?: string): Promise<EdgeUnderBench> {
  const others = workerdsRunning();
  const dev = await startEdgeDev({ port: 0, adminToken: ADMIN_TOKEN, ...(persist === undefined ? {} : { persist }) });
  let pid = await findWorkerd(others);
  return {
    url: dev.url,
    admin: ADMIN_TOKEN,
    dev,
    pid: () => pid,
    memory: () => processMemory(pid),
    cpuMs: () => processCpuMs(pid),
    async restart() {
      const started = performance.now();
      await dev.restart();
      const took = performance.now() - started;
      pid = await findWorkerd(new Set([...others, pid]));
      return took;
    },
    close: () => dev.close(),
  };
}

/** The workerd processes this process has started so far (another miniflare's, or a restart's old one lingering a moment). */
export function workerdsRunning(): Set<number> {
  const running = new Set<number>();
  for (let pid = newestWorkerd(running); pid !== undefined; pid = newestWorkerd(running)) running.add(pid);
  return running;
}

/** The workerd a miniflare just started: the newest, not one of `except`. */
export async function findWorkerd(except: ReadonlySet<number>): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const pid = newestWorkerd(except);
    if (pid !== undefined) return pid;
    await sleep(20);
  }
  throw new Error('found no workerd process started by miniflare (is this Linux, with /proc?)');
}

export interface WorkerdHello {
  readonly url: string;
  readonly pid: number;
  cpuMs(): number;
  close(): Promise<void>;
}

/** The baseline: a Worker that answers every request `Hello World!`, in workerd through miniflare as the edge runs (same compatibility date and flags, no objects). */
export const HELLO_WORKER = "export default { fetch() { return new Response('Hello World!'); } };";

export async function startWorkerdHello(): Promise<WorkerdHello> {
  const others = workerdsRunning();
  const miniflare = new Miniflare({
    modules: true,
    script: HELLO_WORKER,
    compatibilityDate: EDGE_CONFIG.compatibilityDate,
    compatibilityFlags: [...EDGE_CONFIG.compatibilityFlags],
    host: '127.0.0.1',
    port: 0,
  });
  const url = await miniflare.ready;
  const pid = await findWorkerd(others);
  return { url: url.origin, pid, cpuMs: () => processCpuMs(pid), close: () => miniflare.dispose() };
}

export interface SingleWorld {
  readonly url: string;
  readonly pid: number;
  /** The seeded customer to retrieve (the first of twenty). */
  readonly customer: string;
  readonly command: string;
  memory(): ProcessMemory;
  cpuMs(): number;
  stop(): Promise<void>;
}

/**
 * `node dist/bench/http/server.js world 0 <token> <dir>`: bench/http's world server, which serves
 * the world through the CLI's `serveWorld` exactly as `kit world serve <dir> --world bench` does
 * by default (every built-in twin, the world in the server's thread, no request budget, LMDB),
 * seeded with twenty Stripe customers before it listens.
 */
export async function startSingleWorld(dir: string): Promise<SingleWorld> {
  const server = await startServerChild([SINGLE_SERVER, 'world', '0', SINGLE_TOKEN, dir], 'single-world', 60_000, (out) => out.split('\n').find((l) => l.startsWith('ready '))?.trim().split(' '));
  const ready = server.ready;
  const [, port, , customer] = ready;
  if (customer === undefined || customer === '-') throw new Error(`the single-world server seeded no customer: ${ready.join(' ')}`);
  const pid = server.pid;
  return {
    url: `http://127.0.0.1:${port}`,
    pid,
    customer,
    command: 'node dist/bench/http/server.js world 0 <token> <dir>  (serveWorld, as `kit world serve <dir> --world bench`)',
    memory: () => processMemory(pid),
    cpuMs: () => processCpuMs(pid),
    stop: server.stop,
  };
}

export { ALL_CPUS, pin, processCpuMs } from '../processes.js';
