/**
 * Stripe retrieve (`GET /v1/customers/:id`) and create (`POST /v1/customers`) over loopback
 * HTTP, the edge variant against the single-world server, in the same run (issue 32, "Measure"):
 *
 * - the edge: `startEdgeDev` (as `kit edge dev` runs it without `--persist`), one world made with
 *   `POST /-/worlds` with every vendor the edge has (as `kit world serve` serves every built-in
 *   twin), its default request budget (100,000 per 10 s) left as it is;
 * - the single-world server: bench/http's (`serveWorld`, as `kit world serve` serves by default).
 *
 * Both seeded with twenty customers, retrieving the first. autocannon in this process, with
 * `connections` connections; each server's threads pinned to CPU 0 and this process to CPU 1
 * (as bench/http pins wrk), when there are two CPUs and taskset. Each round first loads a
 * floor, a Worker answering `Hello World!` in workerd through miniflare (what any Worker run
 * this way costs at least), then every row on both servers, the order of the two alternating
 * between rounds; each ratio (edge / single, edge / floor) is taken within its round, and the
 * medians over the rounds are reported. Beside requests/s
 * and latencies, the server's own CPU per answer (from /proc): on a shared machine the steadier
 * figure, since it does not count the time a server waited for a core.
 */
import autocannon from 'autocannon';
import { availableParallelism } from 'node:os';
import { createCustomer, createWorld, expectJson, median, quantile, round, vendorHeaders, type MadeWorld } from '../host/client.js';
import { ALL_CPUS, HELLO_WORKER, pin, SINGLE_TOKEN, startEdge, startSingleWorld, startWorkerdHello, type EdgeUnderBench, type SingleWorld, type WorkerdHello } from './servers.js';

export interface StripeOptions {
  dir: string;
  /** Seconds per measured run (a warm-up of up to 2 s comes before each). */
  seconds: number;
  rounds: number;
  connections: number;
  /** Pin the servers to CPU 0 and the load to CPU 1. */
  pin: boolean;
}

type Server = 'edge' | 'single';
type Request = 'retrieve' | 'create';
/** The hello row: workerd's floor through miniflare, GET `/` of a Worker answering `Hello World!`. */
type Row = Request | 'hello';

interface Run {
  requests: number;
  rps: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  /** The server process's CPU per answer, µs (workerd's, or the single-world server's). */
  serverCpuUs: number;
  /** CPU of this process (autocannon) during the run, % of one core. */
  clientCpu: number;
}

export interface StripeRow {
  request: Row;
  server: Server | 'hello';
  what: string;
  /** Medians over the rounds. */
  requestsPerSecond: number | null;
  p50Ms: number | null;
  p90Ms: number | null;
  p99Ms: number | null;
  serverCpuUsPerRequest: number | null;
  clientCpu: number | null;
  /** Answers other than 2xx and socket errors, summed over the rounds (a row with any measured something else). */
  non2xx: number;
}

export interface StripeRatio {
  request: Request;
  /** Medians over the rounds of edge / single within each round. */
  rps: number | null;
  p50: number | null;
  p99: number | null;
  serverCpu: number | null;
  /** The per-round rps ratios, to show their spread. */
  rpsPerRound: (number | null)[];
  /** The edge's requests/s over the workerd hello world's, median over the rounds. */
  edgeOverHello: number | null;
}

export interface StripeFigures {
  commands: { edge: string; single: string; hello: string };
  seconds: number;
  rounds: number;
  connections: number;
  pinned: boolean;
  /** The edge world's vendors (the single-world server serves every built-in twin too). */
  vendors: string[];
  rows: StripeRow[];
  ratios: StripeRatio[];
}

interface Target {
  url: string;
  headers: Record<string, string>;
  cpuMs(): number;
}

const FORM = 'application/x-www-form-urlencoded';
const CREATE_BODY = 'email=grace%40example.com&name=Grace';

async function load(target: Target, request: Row, seconds: number, connections: number): Promise<Run> {
  const latencies: number[] = [];
  let non2xx = 0;
  const create = request === 'create';
  const serverBefore = target.cpuMs();
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  const instance = autocannon({
    url: create ? `${target.url}/stripe/v1/customers` : target.url,
    connections,
    duration: seconds,
    ...(create ? { method: 'POST', body: CREATE_BODY, headers: { ...target.headers, 'content-type': FORM } } : { headers: target.headers }),
  });
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) latencies.push(ms);
    else non2xx++;
  });
  const result = await instance;
  const elapsedMs = performance.now() - started;
  const serverMs = target.cpuMs() - serverBefore;
  const client = process.cpuUsage(clientBefore);
  return {
    requests: latencies.length,
    rps: latencies.length / seconds,
    p50Ms: quantile(latencies, 0.5),
    p90Ms: quantile(latencies, 0.9),
    p99Ms: quantile(latencies, 0.99),
    non2xx,
    errors: result.errors + result.timeouts,
    serverCpuUs: (serverMs * 1000) / Math.max(1, latencies.length),
    clientCpu: (100 * (client.user + client.system)) / 1000 / elapsedMs,
  };
}

/** One request sent and its status checked before a load: a row of 401s or 404s would measure the wrong thing. */
async function check(target: Target, request: Row): Promise<void> {
  const response =
    request === 'create'
      ? await fetch(`${target.url}/stripe/v1/customers`, { method: 'POST', headers: { ...target.headers, 'content-type': FORM }, body: CREATE_BODY })
      : await fetch(target.url, { headers: target.headers });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${request} at ${target.url} answered ${response.status}: ${text.slice(0, 300)}`);
}

function edgeTargets(edge: EdgeUnderBench, world: MadeWorld, customer: string): Record<Request, Target> {
  const headers = vendorHeaders(world.token);
  return {
    retrieve: { url: `${world.url}/stripe/v1/customers/${customer}`, headers, cpuMs: () => edge.cpuMs() },
    create: { url: world.url, headers, cpuMs: () => edge.cpuMs() },
  };
}

function singleTargets(single: SingleWorld): Record<Request, Target> {
  // The world's URL on the single-world server: `{base}/<org>/<world>` (local/bench).
  const base = `${single.url}/local/bench`;
  const headers = vendorHeaders(SINGLE_TOKEN);
  return {
    retrieve: { url: `${base}/stripe/v1/customers/${single.customer}`, headers, cpuMs: () => single.cpuMs() },
    create: { url: base, headers, cpuMs: () => single.cpuMs() },
  };
}

export async function benchStripe(o: StripeOptions, log: (line: string) => void): Promise<StripeFigures> {
  const single = await startSingleWorld(o.dir);
  let edge: EdgeUnderBench | undefined;
  let hello: WorkerdHello | undefined;
  let pinned = false;
  try {
    edge = await startEdge();
    hello = await startWorkerdHello();
    const helloTarget: Target = { url: `${hello.url}/`, headers: {}, cpuMs: () => hello!.cpuMs() };
    await check(helloTarget, 'hello');
    const { vendors } = await expectJson<{ vendors: string[] }>(await fetch(`${edge.url}/-/vendors`, { headers: { 'x-kit-token': edge.admin } }), 200, 'GET /-/vendors');
    const world = await createWorld(edge, 'bench', 'shop', vendors);
    // As the single world is seeded (bench/http/server.ts): twenty customers, the first retrieved.
    const customer = await createCustomer(world, 0);
    for (let i = 1; i < 20; i++) await createCustomer(world, i);
    const targets: Record<Server, Record<Request, Target>> = { edge: edgeTargets(edge, world, customer), single: singleTargets(single) };
    for (const server of ['edge', 'single'] as const) for (const request of ['retrieve', 'create'] as const) await check(targets[server][request], request);

    if (o.pin && availableParallelism() >= 2) {
      pinned = pin(edge.pid(), '0') && pin(single.pid, '0') && pin(hello.pid, '0') && pin(process.pid, '1');
      if (!pinned) log('bench edge: could not pin with taskset; running unpinned');
    }
    const warmUp = Math.min(2, o.seconds);
    await load(helloTarget, 'hello', warmUp, o.connections);
    for (const server of ['edge', 'single'] as const) for (const request of ['retrieve', 'create'] as const) await load(targets[server][request], request, warmUp, o.connections);

    const runs = new Map<string, Run[]>();
    const key = (request: Row, server: Server | 'hello'): string => `${request}/${server}`;
    for (let r = 0; r < o.rounds; r++) {
      const floor = await load(helloTarget, 'hello', o.seconds, o.connections);
      runs.set(key('hello', 'hello'), [...(runs.get(key('hello', 'hello')) ?? []), floor]);
      log(`bench edge: round ${r + 1}/${o.rounds}, workerd hello world: ${floor.rps.toFixed(0)} requests/s, p50 ${floor.p50Ms.toFixed(2)} ms, server CPU ${floor.serverCpuUs.toFixed(0)} µs/answer`);
      // Alternate which server goes first, so that neither always runs after the other's writes.
      const order: Server[] = r % 2 === 0 ? ['edge', 'single'] : ['single', 'edge'];
      for (const request of ['retrieve', 'create'] as const) {
        for (const server of order) {
          const run = await load(targets[server][request], request, o.seconds, o.connections);
          runs.set(key(request, server), [...(runs.get(key(request, server)) ?? []), run]);
          log(`bench edge: round ${r + 1}/${o.rounds}, ${request} on ${server}: ${run.rps.toFixed(0)} requests/s, p50 ${run.p50Ms.toFixed(2)} ms, p99 ${run.p99Ms.toFixed(2)} ms, server CPU ${run.serverCpuUs.toFixed(0)} µs/answer${run.non2xx + run.errors > 0 ? `, ${run.non2xx} non-2xx, ${run.errors} errors` : ''}`);
        }
      }
    }

    const rows: StripeRow[] = [];
    const ratios: StripeRatio[] = [];
    const what: Record<Server | 'hello', string> = {
      hello: 'workerd hello world through miniflare (the floor)',
      edge: 'edge variant (`kit edge dev`: workerd through miniflare)',
      single: 'single-world server (`kit world serve`)',
    };
    const rowsOf: [Row, Server | 'hello'][] = [['hello', 'hello'], ['retrieve', 'edge'], ['retrieve', 'single'], ['create', 'edge'], ['create', 'single']];
    for (const [request, server] of rowsOf) {
      const xs = runs.get(key(request, server)) ?? [];
      const m = (pick: (x: Run) => number, digits = 2): number | null => round(median(xs.map(pick)), digits);
      rows.push({
        request,
        server,
        what: what[server],
        requestsPerSecond: m((x) => x.rps, 0),
        p50Ms: m((x) => x.p50Ms),
        p90Ms: m((x) => x.p90Ms),
        p99Ms: m((x) => x.p99Ms),
        serverCpuUsPerRequest: m((x) => x.serverCpuUs, 1),
        clientCpu: m((x) => x.clientCpu, 0),
        non2xx: xs.reduce((n, x) => n + x.non2xx + x.errors, 0),
      });
    }
    const floors = runs.get(key('hello', 'hello')) ?? [];
    for (const request of ['retrieve', 'create'] as const) {
      const e = runs.get(key(request, 'edge')) ?? [];
      const s = runs.get(key(request, 'single')) ?? [];
      const perRound = (pick: (x: Run) => number): number[] => e.map((x, i) => pick(x) / pick(s[i]!));
      ratios.push({
        request,
        rps: round(median(perRound((x) => x.rps)), 3),
        p50: round(median(perRound((x) => x.p50Ms)), 2),
        p99: round(median(perRound((x) => x.p99Ms)), 2),
        serverCpu: round(median(perRound((x) => x.serverCpuUs)), 2),
        rpsPerRound: perRound((x) => x.rps).map((x) => round(x, 3)),
        edgeOverHello: round(median(e.map((x, i) => x.rps / floors[i]!.rps)), 3),
      });
    }
    return {
      commands: { edge: "startEdgeDev({ port: 0, adminToken }) (host/edge/dev.ts, as `kit edge dev`); the world made with POST /-/worlds", single: single.command, hello: `new Miniflare({ modules: true, script: ${JSON.stringify(HELLO_WORKER)} })` },
      seconds: o.seconds,
      rounds: o.rounds,
      connections: o.connections,
      pinned,
      vendors,
      rows,
      ratios,
    };
  } finally {
    if (pinned) pin(process.pid, ALL_CPUS);
    await hello?.close();
    await edge?.close();
    await single.stop();
  }
}
