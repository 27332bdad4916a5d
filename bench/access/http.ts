/**
 * The same read with each credential, over loopback HTTP with autocannon (issue 33, "Measure":
 * the cost of a session or key check per request against the token's), on two servers:
 *
 * - the single-world server as `kit world serve` starts it by default (bench/http's
 *   `server.js world`, through the CLI's `serveWorld`: the world and `.kit/access/` in LMDB), its
 *   hello greeting seeded before it listens;
 * - the multi-world host as `kit host serve <dir> --port 0 --budget off` starts it (bench/host's
 *   child; sessions and keys in the host's LMDB beside its worlds), one world `bench/shop` made
 *   with `POST /-/worlds` (`vendors: ["hello"]`) and a greeting made in it. `--budget off`: the
 *   load would spend the default budget (100,000 per 10 s); its cost is one call per request
 *   whatever the credential.
 *
 * The read is `GET {world_url}/hello/v1/greetings/<id>`, the cheapest real twin read; the rows
 * differ only in the credential (credentials.ts). Each round loads every row of both servers, the
 * rows' order rotated and the servers' order swapped between rounds; every ratio is a row over
 * the token's row of the same server in the same round, and the medians over the rounds are
 * reported. The servers' threads on CPU 0 and autocannon on CPU 1 when there are two CPUs and
 * taskset (as bench/http and bench/edge pin theirs). Beside requests/s and latencies, the server
 * process's CPU per answer from /proc: on a shared machine, the steadier figure.
 */
import autocannon from 'autocannon';
import { mkdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { ALL_CPUS, pin, SINGLE_TOKEN, startSingleWorld, type SingleWorld } from '../edge/servers.js';
import { startHostChild, type HostChild } from '../host/child.js';
import { createWorld, quantile, summarizeLoads, type LoadRun, type LoadSummary } from '../host/client.js';
import { CREDENTIALS, CREDENTIAL_WHAT, prepareCredentials, type Answer, type BenchWorld, type CredentialHeaders, type CredentialKind } from './credentials.js';

export interface HttpOptions {
  dir: string;
  /** Seconds per measured run (a warm-up of up to 2 s per row comes first). */
  seconds: number;
  rounds: number;
  connections: number;
  /** The servers on CPU 0, the load on CPU 1. */
  pin: boolean;
}

export type ServerKind = 'single' | 'host';

export type Run = LoadRun;

/** A row: one credential on one server; its ratios are × the token's row of the same server and round. */
export interface HttpRow extends LoadSummary {
  server: ServerKind;
  credential: CredentialKind;
  what: string;
}

export interface HttpFigures {
  commands: Record<ServerKind, string>;
  read: Record<ServerKind, string>;
  seconds: number;
  rounds: number;
  connections: number;
  pinned: boolean;
  rows: HttpRow[];
}

const SERVER_WHAT: Record<ServerKind, string> = {
  single: 'single-world server (`kit world serve`)',
  host: 'multi-world host (`kit host serve --budget off`)',
};

export interface Target {
  base: string;
  world: BenchWorld;
  credentials: CredentialHeaders;
  pid: number;
  cpuMs(): number;
}

/** One request over node:http to `base` (a fresh connection), `Host` as given when given. */
export function sendTo(base: string): (method: string, path: string, headers: Record<string, string>, body?: string) => Promise<Answer> {
  const { hostname, port } = new URL(base);
  return (method, path, headers, body) =>
    new Promise((resolve, reject) => {
      const sent = { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) };
      const req = httpRequest({ host: hostname, port, method, path, headers: sent, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const flat: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
          resolve({ status: res.statusCode ?? 0, headers: flat, text: Buffer.concat(chunks).toString('utf8') });
        });
      });
      req.on('error', reject);
      req.end(body);
    });
}

/** A greeting made in the world with its token (`POST {world_url}/hello/v1/greetings`): the record every row reads. */
export async function makeGreeting(send: ReturnType<typeof sendTo>, urlPath: string, token: string): Promise<string> {
  const created = await send('POST', `${urlPath}/hello/v1/greetings`, { 'x-kit-token': token, 'content-type': 'application/json' }, JSON.stringify({ name: 'Ada' }));
  if (created.status !== 200) throw new Error(`POST ${urlPath}/hello/v1/greetings answered ${created.status}: ${created.text.slice(0, 300)}`);
  return (JSON.parse(created.text) as { id: string }).id;
}

export async function singleTarget(single: SingleWorld): Promise<Target> {
  const port = new URL(single.url).port;
  const send = sendTo(single.url);
  const greeting = await makeGreeting(send, '/local/bench', SINGLE_TOKEN);
  // bench/http's server serves `local/bench` (serveWorld's default org, the bench's world name).
  const world: BenchWorld = {
    name: 'local/bench',
    token: SINGLE_TOKEN,
    urlPath: '/local/bench',
    apiPath: '/-/local/bench',
    host: `127.0.0.1:${port}`,
    originHost: `bench--local.localhost:${port}`,
    readPath: `/local/bench/hello/v1/greetings/${greeting}`,
  };
  const credentials = await prepareCredentials(send, world);
  return { base: single.url, world, credentials, pid: single.pid, cpuMs: () => single.cpuMs() };
}

async function hostTarget(host: HostChild): Promise<Target> {
  const made = await createWorld(host, 'bench', 'shop', ['hello']);
  const send = sendTo(host.url);
  const greeting = await makeGreeting(send, '/bench/shop', made.token);
  const world: BenchWorld = {
    name: 'bench/shop',
    token: made.token,
    urlPath: '/bench/shop',
    apiPath: '/-/bench/shop',
    host: new URL(host.url).host,
    originHost: `shop--bench.localhost:${new URL(host.url).port}`,
    readPath: `/bench/shop/hello/v1/greetings/${greeting}`,
  };
  const credentials = await prepareCredentials(send, world);
  return { base: host.url, world, credentials, pid: host.pid, cpuMs: () => host.cpu().totalMs };
}

export async function load(target: Target, kind: CredentialKind, seconds: number, connections: number): Promise<Run> {
  const latencies: number[] = [];
  let bad = 0;
  const before = target.cpuMs();
  const instance = autocannon({ url: `${target.base}${target.world.readPath}`, connections, duration: seconds, headers: target.credentials[kind] });
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status === 200) latencies.push(ms);
    else bad++;
  });
  const result = await instance;
  const serverMs = target.cpuMs() - before;
  return {
    rps: latencies.length / seconds,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    serverCpuUs: (serverMs * 1000) / Math.max(1, latencies.length),
    bad: bad + result.errors + result.timeouts,
  };
}

export async function benchHttp(o: HttpOptions, log: (line: string) => void): Promise<HttpFigures> {
  const single = await startSingleWorld(join(o.dir, 'single'));
  let host: HostChild | undefined;
  let pinned = false;
  try {
    mkdirSync(join(o.dir, 'host'));
    host = await startHostChild(join(o.dir, 'host'), ['--budget', 'off']);
    const targets: Record<ServerKind, Target> = { single: await singleTarget(single), host: await hostTarget(host) };
    if (o.pin && availableParallelism() >= 2) {
      pinned = pin(single.pid, '0') && pin(host.pid, '0') && pin(process.pid, '1');
      if (!pinned) log('bench access: could not pin with taskset; running unpinned');
    }
    const warmUp = Math.min(2, o.seconds);
    for (const server of ['single', 'host'] as const) for (const kind of CREDENTIALS) await load(targets[server], kind, warmUp, o.connections);

    const runs = new Map<string, Run[]>();
    const key = (server: ServerKind, kind: CredentialKind): string => `${server}/${kind}`;
    for (let r = 0; r < o.rounds; r++) {
      const servers: ServerKind[] = r % 2 === 0 ? ['single', 'host'] : ['host', 'single'];
      const shift = r % CREDENTIALS.length;
      const order = [...CREDENTIALS.slice(shift), ...CREDENTIALS.slice(0, shift)];
      for (const server of servers) {
        for (const kind of order) {
          const run = await load(targets[server], kind, o.seconds, o.connections);
          runs.set(key(server, kind), [...(runs.get(key(server, kind)) ?? []), run]);
          log(`bench access: round ${r + 1}/${o.rounds}, ${server}, ${kind}: ${run.rps.toFixed(0)} requests/s, p50 ${run.p50Ms.toFixed(2)} ms, p99 ${run.p99Ms.toFixed(2)} ms, server CPU ${run.serverCpuUs.toFixed(1)} µs/answer${run.bad > 0 ? `, ${run.bad} bad` : ''}`);
        }
      }
    }

    const rows: HttpRow[] = [];
    for (const server of ['single', 'host'] as const) {
      const base = runs.get(key(server, 'token')) ?? [];
      for (const kind of CREDENTIALS) {
        const xs = runs.get(key(server, kind)) ?? [];
        rows.push({ server, credential: kind, what: CREDENTIAL_WHAT[kind], ...summarizeLoads(xs, base) });
      }
    }
    return {
      commands: { single: single.command, host: host.command },
      read: { single: `GET ${targets.single.world.readPath}`, host: `GET ${targets.host.world.readPath}` },
      seconds: o.seconds,
      rounds: o.rounds,
      connections: o.connections,
      pinned,
      rows,
    };
  } finally {
    if (pinned) pin(process.pid, ALL_CPUS);
    await host?.stop();
    await single.stop();
  }
}
