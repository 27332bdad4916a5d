/**
 * What the host benches send: the admin's `POST /-/worlds`, a Stripe create and retrieve as an
 * app sends them (the world's token in x-kit-token, a test key as the API key), and the world
 * API. Every answer's status is checked: a bench that times errors measures nothing.
 */

export interface Host {
  url: string;
  admin: string;
}

export interface MadeWorld {
  name: string;
  token: string;
  /** `{world_url}`: `{base}/<org>/<world>`. */
  url: string;
  /** `{world_api}`: `{base}/-/<org>/<world>`. */
  api: string;
}

export const STRIPE_KEY = 'sk_test_bench';

export function vendorHeaders(token: string): Record<string, string> {
  return { 'x-kit-token': token, authorization: `Bearer ${STRIPE_KEY}` };
}

/** The answer's JSON, or an error naming the request when the status is not `status`. */
export async function expectJson<T>(response: Response, status: number, what: string): Promise<T> {
  const text = await response.text();
  if (response.status !== status) throw new Error(`${what} answered ${response.status}, not ${status}: ${text.slice(0, 300)}`);
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

export async function createWorld(host: Host, org: string, world: string, vendors: string[]): Promise<MadeWorld> {
  const response = await fetch(`${host.url}/-/worlds`, {
    method: 'POST',
    headers: { 'x-kit-token': host.admin, 'content-type': 'application/json' },
    body: JSON.stringify({ org, world, vendors }),
  });
  const row = await expectJson<{ name: string; token: string }>(response, 201, `POST /-/worlds ${org}/${world}`);
  return { name: row.name, token: row.token, url: `${host.url}/${org}/${world}`, api: `${host.url}/-/${org}/${world}` };
}

/** The same world on another start of the host (a restart listens on another port). */
export function onHost(world: MadeWorld, host: Host): MadeWorld {
  return { ...world, url: `${host.url}/${world.name}`, api: `${host.url}/-/${world.name}` };
}

export async function createCustomer(world: MadeWorld, n: number): Promise<string> {
  const response = await fetch(`${world.url}/stripe/v1/customers`, {
    method: 'POST',
    headers: { ...vendorHeaders(world.token), 'content-type': 'application/x-www-form-urlencoded' },
    body: `email=c${n}%40example.com&name=Customer+${n}`,
  });
  return (await expectJson<{ id: string }>(response, 200, `POST ${world.name} /v1/customers`)).id;
}

export async function retrieveCustomer(world: MadeWorld, id: string): Promise<void> {
  const response = await fetch(`${world.url}/stripe/v1/customers/${id}`, { headers: vendorHeaders(world.token) });
  const customer = await expectJson<{ id: string }>(response, 200, `GET ${world.name} /v1/customers/${id}`);
  if (customer.id !== id) throw new Error(`GET ${world.name} /v1/customers/${id} answered customer ${customer.id}`);
}

/** The Stripe customer list's ids (`GET /v1/customers?limit=…`). */
export async function listCustomers(world: MadeWorld, limit: number): Promise<string[]> {
  const response = await fetch(`${world.url}/stripe/v1/customers?limit=${limit}`, { headers: vendorHeaders(world.token) });
  const page = await expectJson<{ data: { id: string }[] }>(response, 200, `GET ${world.name} /v1/customers`);
  return page.data.map((c) => c.id);
}

/** The world's log length for one twin (`GET {world_api}/map`). */
export async function headPosition(world: MadeWorld, twin: string): Promise<number> {
  const map = await expectJson<{ twins: { twin: string; position: number }[] }>(await fetch(`${world.api}/map`, { headers: { 'x-kit-token': world.token } }), 200, `GET ${world.name} map`);
  const found = map.twins.find((t) => t.twin === twin);
  if (found === undefined) throw new Error(`${world.name} has no twin ${twin}`);
  return found.position;
}

/** `GET /-/worlds`: how many worlds there are, and how many are open (loaded in memory). */
export async function worldsOpen(host: Host): Promise<{ worlds: number; open: number }> {
  const response = await fetch(`${host.url}/-/worlds`, { headers: { 'x-kit-token': host.admin } });
  const { worlds } = await expectJson<{ worlds: { open: boolean }[] }>(response, 200, 'GET /-/worlds');
  return { worlds: worlds.length, open: worlds.filter((w) => w.open).length };
}

/** Runs `work(i)` for i < count, at most `concurrency` at once; answers the results in order. */
export async function inParallel<T>(count: number, concurrency: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count) {
      const i = next++;
      results[i] = await work(i);
    }
  });
  await Promise.all(lanes);
  return results;
}

/** Milliseconds `work` took. */
export async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** The q-quantile (0..1) of `xs`, nearest rank; NaN for none. */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

export const median = (xs: readonly number[]): number => quantile(xs, 0.5);

/** A figure rounded for the JSON and the tables (null when not finite). */
export function round(x: number, digits = 2): number | null {
  return Number.isFinite(x) ? Number(x.toFixed(digits)) : null;
}

export const MiB = (bytes: number): number => bytes / 2 ** 20;

/** One load of one row of a request bench: what the load generator saw and what the server spent. */
export interface LoadRun {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** The server process's CPU per answer, µs. */
  serverCpuUs: number;
  /** Answers other than the expected status, and socket errors and timeouts. */
  bad: number;
}

/** A row of a request bench: medians over its rounds, and its ratios to its baseline's row. */
export interface LoadSummary {
  requestsPerSecond: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
  serverCpuUsPerRequest: number | null;
  /** × the baseline row of the same round; medians over the rounds. */
  ratio: { rps: number | null; p50: number | null; p99: number | null; serverCpu: number | null };
  /** The requests/s ratio of each round, to show the spread. */
  rpsRatioPerRound: (number | null)[];
  /** Answers other than the expected status, and socket errors, summed over the rounds. */
  bad: number;
}

/**
 * A row's loads over the rounds against its baseline's loads of the same rounds: the medians,
 * and each ratio taken within its round, then its median (the access and roots benches' rows).
 */
export function summarizeLoads(xs: LoadRun[], base: LoadRun[]): LoadSummary {
  const m = (pick: (x: LoadRun) => number, digits = 2): number | null => round(median(xs.map(pick)), digits);
  const ratio = (pick: (x: LoadRun) => number): number[] => xs.map((x, i) => pick(x) / pick(base[i]!));
  return {
    requestsPerSecond: m((x) => x.rps, 0),
    p50Ms: m((x) => x.p50Ms),
    p99Ms: m((x) => x.p99Ms),
    serverCpuUsPerRequest: m((x) => x.serverCpuUs, 1),
    ratio: {
      rps: round(median(ratio((x) => x.rps)), 3),
      p50: round(median(ratio((x) => x.p50Ms)), 3),
      p99: round(median(ratio((x) => x.p99Ms)), 3),
      serverCpu: round(median(ratio((x) => x.serverCpuUs)), 3),
    },
    rpsRatioPerRound: ratio((x) => x.rps).map((x) => round(x, 3)),
    bad: xs.reduce((n, x) => n + x.bad, 0),
  };
}
