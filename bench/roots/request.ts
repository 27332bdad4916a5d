/**
 * What a root adds to a twin's request (issue 34, "Measure"): `x-kit-observed-at` on every
 * answer of a rooted twin's vendor API, and the twin status. Over loopback with autocannon, on
 * the copy (served as `kit world serve` serves it, rooted at the real account and refreshed):
 *
 * - `GET {world_url}/stripe/v1/customers/<id>` with the copy rooted (the answer carries
 *   `x-kit-observed-at`), against the same GET of the same world with its root cleared
 *   (`PUT …/twins/stripe/root` null: the copied records stay, and the world's token and a test
 *   key still open the copied account, so the answer is the same object, without the header).
 *   Rooting it again (`PUT …/root`, then `POST …/refresh?force=1`, which finds nothing changed
 *   and writes nothing) brings the header back.
 * - `GET {world_api}/twins/stripe/status` against `GET {world_api}/clock` (a world API read of
 *   about the least work), both with the copy rooted.
 *
 * Each round loads every row for `seconds`; the rooted and unrooted rows swap order every
 * round (one root change per round), as do status and clock. Every ratio is taken within a
 * round (rooted over unrooted, status over clock), and the medians over the rounds are
 * reported. The copy and the real account on CPU 0, autocannon on CPU 1, when there are two
 * CPUs and taskset. Beside requests/s and latencies, the copy's CPU per answer from /proc.
 */
import autocannon from 'autocannon';
import { availableParallelism } from 'node:os';
import { quantile, round, summarizeLoads, type LoadRun, type LoadSummary } from '../host/client.js';
import { ALL_CPUS, expectStatus, pin, rootAt, send, stripeHeaders, worldApi, type WorldServer } from './servers.js';
import type { Worlds } from './worlds.js';

export interface RequestOptions {
  seconds: number;
  /** Seconds of load per row before the rounds (0: none). */
  warmUp: number;
  rounds: number;
  connections: number;
  pin: boolean;
}

export type RowKind = 'rooted' | 'unrooted' | 'status' | 'clock';

const ROW_WHAT: Record<RowKind, string> = {
  rooted: 'Stripe GET /v1/customers/<id>, the twin rooted and refreshed (answers carry x-kit-observed-at)',
  unrooted: 'the same GET, the same world with its root cleared (no header; the baseline)',
  status: 'GET {world_api}/twins/stripe/status, rooted',
  clock: 'GET {world_api}/clock (the baseline)',
};

type Run = LoadRun;

/** A row; its ratios are rooted ÷ unrooted and status ÷ clock, each within its round (1 for the baselines). */
export interface RequestRow extends LoadSummary {
  kind: RowKind;
  what: string;
}

export interface RequestFigures {
  customers: number;
  seconds: number;
  rounds: number;
  connections: number;
  pinned: boolean;
  /** The answer's bytes (headers and body, as sent) with the root and without it. */
  answerBytes: { rooted: number; unrooted: number };
  observedAtHeader: string;
  /** What each setting of the root again took (`PUT …/root`, then the forced refresh finding nothing changed). */
  rerootMs: number[];
  rows: RequestRow[];
}

/** The bytes of a whole HTTP/1.1 answer as the server sent them (status line, headers, body). */
function answerSize(status: number, headers: Headers, body: string): number {
  let size = `HTTP/1.1 ${status} \r\n`.length + 2;
  headers.forEach((value, name) => (size += name.length + 2 + value.length + 2));
  return size + Buffer.byteLength(body);
}

async function load(url: string, headers: Record<string, string>, server: WorldServer, seconds: number, connections: number): Promise<Run> {
  const latencies: number[] = [];
  let bad = 0;
  const before = server.cpuMs();
  const started = performance.now();
  // autocannon stops at its first sample after the duration: samples every 100 ms, not every second, so that a short run is as long as asked.
  const instance = autocannon({ url, connections, duration: seconds, headers, sampleInt: 100 } as Parameters<typeof autocannon>[0]);
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status === 200) latencies.push(ms);
    else bad++;
  });
  const result = await instance;
  const elapsedS = (performance.now() - started) / 1000;
  const serverMs = server.cpuMs() - before;
  return {
    rps: latencies.length / elapsedS,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    serverCpuUs: (serverMs * 1000) / Math.max(1, latencies.length),
    bad: bad + result.errors + result.timeouts,
  };
}

export async function benchRequest(o: RequestOptions, worlds: Worlds, log: (line: string) => void): Promise<RequestFigures> {
  const { real, copy } = await worlds.refreshed();
  const id = real.firstCustomer;
  if (id === null) throw new Error('the real account has no customer to read');
  const customerUrl = `${copy.url}/stripe/v1/customers/${id}`;
  const vendor = stripeHeaders(copy);
  const world = { 'x-kit-token': copy.token };
  const expected = expectStatus<unknown>(await send('GET', `${real.url}/stripe/v1/customers/${id}`, { authorization: `Bearer ${real.token}` }), 200, 'GET the real customer');

  /** The answer's bytes and header, with the root and without, as last seen by `check`. */
  const seen: { rooted?: { bytes: number; header: string }; unrooted?: { bytes: number } } = {};
  /** One GET of the customer: the real account's object, with the header or without it as asked. */
  async function check(rooted: boolean): Promise<void> {
    const answer = await send('GET', customerUrl, vendor);
    const body = expectStatus<unknown>(answer, 200, `GET the copy's /v1/customers/${id}`);
    if (JSON.stringify(body) !== JSON.stringify(expected)) throw new Error(`the copy answers another object for ${id}: ${answer.text.slice(0, 300)}`);
    const header = answer.headers.get('x-kit-observed-at');
    if ((header !== null) !== rooted) throw new Error(`the copy ${rooted ? 'rooted' : 'unrooted'} answered x-kit-observed-at ${header}`);
    const bytes = answerSize(answer.status, answer.headers, answer.text);
    if (header !== null) seen.rooted = { bytes, header };
    else seen.unrooted = { bytes };
  }

  let rooted = true;
  const rerootMs: number[] = [];
  /** Clears the root (`PUT …/root` null), or sets it again and refreshes (`?force=1`: nothing changed, nothing written). */
  async function setRooted(want: boolean): Promise<void> {
    if (want === rooted) return;
    if (want) {
      const started = performance.now();
      await rootAt(copy, real);
      const refreshed = expectStatus<{ refresh: { entries: number } }>(await worldApi(copy, 'POST', '/twins/stripe/refresh?force=1'), 200, 'POST …/refresh?force=1');
      if (refreshed.refresh.entries !== 0) throw new Error(`rooting the copy again wrote ${refreshed.refresh.entries} entries: the root changed`);
      rerootMs.push(round(performance.now() - started, 1) as number);
    } else {
      expectStatus(await worldApi(copy, 'PUT', '/twins/stripe/root', null), 200, 'PUT …/twins/stripe/root null');
    }
    rooted = want;
  }

  await check(true);
  expectStatus(await worldApi(copy, 'GET', '/twins/stripe/status'), 200, 'GET …/twins/stripe/status');
  expectStatus(await worldApi(copy, 'GET', '/clock'), 200, 'GET …/clock');

  const target: Record<RowKind, { url: string; headers: Record<string, string>; rooted: boolean }> = {
    rooted: { url: customerUrl, headers: vendor, rooted: true },
    unrooted: { url: customerUrl, headers: vendor, rooted: false },
    status: { url: `${copy.api}/twins/stripe/status`, headers: world, rooted: true },
    clock: { url: `${copy.api}/clock`, headers: world, rooted: true },
  };

  let pinned = false;
  if (o.pin && availableParallelism() >= 2) {
    pinned = pin(copy.pid, '0') && pin(real.pid, '0') && pin(process.pid, '1');
    if (!pinned) log('bench roots: could not pin with taskset; running unpinned');
  }
  const runs = new Map<RowKind, Run[]>();
  try {
    for (const kind of o.warmUp > 0 ? (['unrooted', 'rooted', 'status', 'clock'] as const) : []) {
      await setRooted(target[kind].rooted);
      await load(target[kind].url, target[kind].headers, copy, o.warmUp, o.connections);
    }
    for (let r = 0; r < o.rounds; r++) {
      // Rooted after the warm-up: even rounds start rooted and end unrooted, odd rounds the other way (one root change a round).
      const order: RowKind[] = r % 2 === 0 ? ['rooted', 'status', 'clock', 'unrooted'] : ['unrooted', 'clock', 'status', 'rooted'];
      for (const kind of order) {
        await setRooted(target[kind].rooted);
        await check(target[kind].rooted);
        const run = await load(target[kind].url, target[kind].headers, copy, o.seconds, o.connections);
        runs.set(kind, [...(runs.get(kind) ?? []), run]);
        log(`bench roots: round ${r + 1}/${o.rounds}, ${kind}: ${run.rps.toFixed(0)} requests/s, p50 ${run.p50Ms.toFixed(2)} ms, p99 ${run.p99Ms.toFixed(2)} ms, server CPU ${run.serverCpuUs.toFixed(1)} µs/answer${run.bad > 0 ? `, ${run.bad} bad` : ''}`);
      }
    }
  } finally {
    if (pinned) pin(process.pid, ALL_CPUS);
    // Left rooted and refreshed, as the part found it.
    await setRooted(true);
  }

  const baselineOf: Record<RowKind, RowKind> = { rooted: 'unrooted', unrooted: 'unrooted', status: 'clock', clock: 'clock' };
  const rows: RequestRow[] = (['rooted', 'unrooted', 'status', 'clock'] as const).map((kind) => {
    const xs = runs.get(kind) ?? [];
    const base = runs.get(baselineOf[kind]) ?? [];
    return { kind, what: ROW_WHAT[kind], ...summarizeLoads(xs, base) };
  });
  return {
    customers: worlds.customers,
    seconds: o.seconds,
    rounds: o.rounds,
    connections: o.connections,
    pinned,
    answerBytes: { rooted: seen.rooted?.bytes ?? 0, unrooted: seen.unrooted?.bytes ?? 0 },
    observedAtHeader: `x-kit-observed-at: ${seen.rooted?.header ?? ''}`,
    rerootMs,
    rows,
  };
}
