/**
 * The worlds of the roots bench, each served by a process of its own as `kit world serve` serves
 * it (server.ts), and what the bench reads of them: their LMDB data file, their process's CPU,
 * and their answers over loopback HTTP.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processCpuMs, startServerChild } from '../processes.js';

/** dist/bench/roots/ → its server. */
const SERVER = join(dirname(fileURLToPath(import.meta.url)), 'server.js');

export const COMMAND = 'node dist/bench/roots/server.js <dir> <world> <token> <customers> …  (serveWorld for each world, as `kit world serve <dir> --world <world>`)';

/** A Stripe test key, beside the world's token, as an app sends them (it opens the copied account once a refresh has read one). */
export const STRIPE_KEY = 'sk_test_roots_bench';

export interface WorldServer {
  readonly world: string;
  readonly token: string;
  /** `http://127.0.0.1:<port>` */
  readonly base: string;
  /** `{world_url}`: `{base}/local/<world>`. */
  readonly url: string;
  /** `{world_api}`: `{base}/-/local/<world>`. */
  readonly api: string;
  /** Its process's (shared by the worlds started together). */
  readonly pid: number;
  /** What the seeding took in the server (0 without customers), and the first customer's id. */
  readonly seedMs: number;
  readonly firstCustomer: string | null;
  /** The world's LMDB data file. */
  readonly dataFile: string;
  /** The process's CPU so far. */
  cpuMs(): number;
  /** Stops the process (and the worlds started with this one). */
  stop(): Promise<void>;
}

export { ALL_CPUS, pin, processCpuMs } from '../processes.js';

/** A token of the CLI's format (`tok_` and 43 URL-safe characters), new for each world. */
function newToken(): string {
  return `tok_${randomBytes(32).toString('base64url')}`;
}

export interface WorldSpec {
  /** Made here. */
  dir: string;
  world: string;
  /** Stripe customers made in it before it listens. */
  customers: number;
}

/**
 * Starts the worlds of `specs` in one process (server.ts), each served from its `dir`; answers
 * them in the same order. They share the process, so its pid, CPU and stop. `nodeArgs` go to its
 * `node` (profile.ts's `--cpu-prof`).
 */
export async function startWorldServers(specs: readonly WorldSpec[], nodeArgs: readonly string[] = []): Promise<WorldServer[]> {
  const tokens = specs.map(() => newToken());
  const args = specs.flatMap((spec, i) => {
    mkdirSync(spec.dir, { recursive: true });
    return [spec.dir, spec.world, tokens[i]!, String(spec.customers)];
  });
  const names = specs.map((s) => s.world).join(' and ');
  const server = await startServerChild([...nodeArgs, SERVER, ...args], names, 300_000, (out) => {
    const all = out.split('\n');
    return all.some((l) => l.trim() === 'ready') ? all.filter((l) => l.startsWith('world ')).map((l) => l.trim().split(' ')) : undefined;
  });
  const lines = server.ready;
  const { pid, stop } = server;
  return specs.map((spec, i) => {
    const [, world, port, seedMs, first] = lines[i] ?? [];
    if (world !== spec.world) throw new Error(`the server answered ${lines.map((l) => l.join(' ')).join('; ')} for ${names}`);
    const base = `http://127.0.0.1:${port}`;
    return {
      world: spec.world,
      token: tokens[i]!,
      base,
      url: `${base}/local/${spec.world}`,
      api: `${base}/-/local/${spec.world}`,
      pid,
      seedMs: Number(seedMs),
      firstCustomer: first === undefined || first === '-' ? null : first,
      dataFile: join(spec.dir, '.kit', 'world', 'data.mdb'),
      cpuMs: () => processCpuMs(pid),
      stop,
    };
  });
}

/** One world in a process of its own, as `kit world serve` serves it. */
export async function startWorldServer(dir: string, world: string, customers: number, nodeArgs: readonly string[] = []): Promise<WorldServer> {
  return (await startWorldServers([{ dir, world, customers }], nodeArgs))[0]!;
}

/** The data file's size (`st_size`) and what the file system holds of it (`st_blocks` × 512), in bytes. */
export function fileBytes(path: string): { size: number; allocated: number } {
  const s = statSync(path);
  return { size: s.size, allocated: s.blocks * 512 };
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** Wall time from sending to the whole body, ms. */
  ms: number;
}

/** One request; the answer's status is the caller's to check (`expectStatus`). */
export async function send(method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const started = performance.now();
  const init: RequestInit = { method, headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, ms: performance.now() - started };
}

/** The answer's JSON, or an error naming the request when its status is not `status`. */
export function expectStatus<T>(answer: Answer, status: number, what: string): T {
  if (answer.status !== status) throw new Error(`${what} answered ${answer.status}, not ${status}: ${answer.text.slice(0, 400)}`);
  return (answer.text === '' ? undefined : JSON.parse(answer.text)) as T;
}

/** The world API with the world's token. */
export function worldApi(server: WorldServer, method: string, path: string, body?: unknown): Promise<Answer> {
  return send(method, `${server.api}${path}`, { 'x-kit-token': server.token }, body);
}

/** The headers of a Stripe request to the world: its token and a test key, as bench/host's and bench/http's requests. */
export function stripeHeaders(server: WorldServer): Record<string, string> {
  return { 'x-kit-token': server.token, authorization: `Bearer ${STRIPE_KEY}` };
}

/** The root of `copy`'s Stripe twin: `real`'s Stripe twin at its world URL, with `real`'s token sealed as the bearer. */
export async function rootAt(copy: WorldServer, real: WorldServer): Promise<string> {
  const url = `${real.url}/stripe`;
  expectStatus(await worldApi(copy, 'PUT', '/twins/stripe/root', { url }), 200, 'PUT …/twins/stripe/root');
  expectStatus(await worldApi(copy, 'PUT', '/twins/stripe/credential', { bearer: real.token }), 200, 'PUT …/twins/stripe/credential');
  return url;
}

/** The twin's log length (`GET {world_api}/twins/stripe/status`'s position). */
export async function stripePosition(server: WorldServer): Promise<number> {
  const status = expectStatus<{ position: number }>(await worldApi(server, 'GET', '/twins/stripe/status'), 200, 'GET …/twins/stripe/status');
  return status.position;
}
