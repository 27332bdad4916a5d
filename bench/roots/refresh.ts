/**
 * A refresh of a Stripe root holding n customers (issue 34, "Measure"), as a user has it by
 * default: two worlds, each served as `kit world serve` serves it (server.ts), the "real" one
 * holding n customers in its default account, the copy's Stripe twin rooted at the real one's
 * Stripe twin (`http://127.0.0.1:<port>/local/real/stripe`) with the real world's token sealed as
 * `bearer`, reached through the host's outbound fetch on Node (runtime/roots/node-outbound.ts;
 * `kit world serve` allows loopback).
 *
 * Measured: the wall time of `POST …/twins/stripe/refresh` as the caller sees it, the refresh's
 * own tally (reads, entries, records written), what it wrote (the LMDB data file's growth, and
 * the JSON bytes of the entries `GET …/log/stripe` answers), both servers' CPU during it; a
 * second refresh with nothing changed (`?force=1`, as the throttle would refuse it) and what it
 * wrote; and that a third one at once is refused 429 with Retry-After, writing nothing.
 *
 * Baselines in the same run: the same n customers created through a third world's Stripe API
 * over loopback (`POST /v1/customers`, 32 in flight, the world's token as the API key; a world
 * served the same way, empty, in the real account's process: worlds.ts): what a user without a
 * root does to get those customers into a world, one durable entry each; and the reads alone: the real account's customer list walked a hundred
 * at a time by a plain client, as the refresh walks it, with nothing written.
 */
import { inParallel, round } from '../host/client.js';
import { customerForm, SEED_IN_FLIGHT } from './seed.js';
import { COMMAND, expectStatus, fileBytes, rootAt, send, stripePosition, worldApi, type WorldServer } from './servers.js';
import type { Worlds } from './worlds.js';

/** What a stretch of work wrote to a world. */
export interface Written {
  /** The data file's growth: `st_size`, and the blocks the file system holds for it. */
  fileBytes: number;
  allocatedBytes: number;
  /** Log entries appended, their writes (records and the refresh's `__root` markers), and their JSON bytes as `GET …/log/stripe` answers them. */
  entries: number;
  writes: number;
  markerWrites: number;
  logJsonBytes: number;
}

/** The runner's report of a refresh (runtime/runner/roots.ts `RefreshReport`). */
export interface RefreshReport {
  ok: boolean;
  observedAt: string | null;
  durationMs: number;
  reads: number;
  entries: number;
  written: number;
  deleted: number;
}

export interface RefreshRun {
  /** `POST …/refresh` from sending to the whole answer, as the caller sees it. */
  wallMs: number;
  report: RefreshReport;
  written: Written;
  /** Each server's CPU during it (user + system, all threads). */
  copyCpuMs: number;
  realCpuMs: number;
}

export interface RefreshFigures {
  command: string;
  customers: number;
  root: string;
  /** The real account seeded in its server, in-process through the runner (32 in flight). */
  seedMs: number;
  first: RefreshRun;
  /** `?force=1` at once, the root unchanged. */
  unchanged: RefreshRun;
  /** A third refresh at once, without force. */
  throttled: { status: number; code: string; retryAfterS: number | null; wroteEntries: number; fileBytes: number };
  /** The customers' records in the copy after the first refresh (`…/twins/stripe/status` resources). */
  copiedCustomers: number;
  baseline: {
    what: string;
    inFlight: number;
    wallMs: number;
    written: Written;
    serverCpuMs: number;
  };
  reads: { what: string; pages: number; wallMs: number; bytes: number };
  ratio: {
    /** First refresh ÷ the baseline's creates: wall time, the serving process's CPU, data file growth, log JSON bytes. */
    wall: number | null;
    cpu: number | null;
    fileBytes: number | null;
    logJsonBytes: number | null;
    /** First refresh ÷ the reads alone. */
    overReads: number | null;
    /** The unchanged refresh ÷ the first. */
    unchangedOverFirst: number | null;
  };
}

interface LogPage {
  entries: { writes: { type: string }[] }[];
  next: number | null;
}

/** What the log holds after `from`, walked through the world API (the JSON bytes of each entry as answered). */
async function logAfter(server: WorldServer, from: number): Promise<Omit<Written, 'fileBytes' | 'allocatedBytes'>> {
  const out = { entries: 0, writes: 0, markerWrites: 0, logJsonBytes: 0 };
  let after: number | null = from;
  while (after !== null) {
    const page: LogPage = expectStatus<LogPage>(await worldApi(server, 'GET', `/log/stripe?after=${after}&limit=1000`), 200, 'GET …/log/stripe');
    for (const entry of page.entries) {
      out.entries++;
      out.writes += entry.writes.length;
      out.markerWrites += entry.writes.filter((w) => w.type === '__root').length;
      out.logJsonBytes += Buffer.byteLength(JSON.stringify(entry));
    }
    after = page.entries.length === 0 ? null : page.next;
  }
  return out;
}

/** Runs `work` and answers what it wrote to `server` and took of both servers' CPU. */
async function measured<T>(server: WorldServer, other: WorldServer | null, work: () => Promise<T>): Promise<{ result: T; written: Written; cpuMs: number; otherCpuMs: number }> {
  const position = await stripePosition(server);
  const file = fileBytes(server.dataFile);
  const cpu = server.cpuMs();
  const otherCpu = other?.cpuMs() ?? 0;
  const result = await work();
  const cpuMs = server.cpuMs() - cpu;
  const otherCpuMs = (other?.cpuMs() ?? 0) - otherCpu;
  const after = fileBytes(server.dataFile);
  const log = await logAfter(server, position);
  return { result, written: { fileBytes: after.size - file.size, allocatedBytes: after.allocated - file.allocated, ...log }, cpuMs, otherCpuMs };
}

async function refreshOnce(copy: WorldServer, real: WorldServer, force: boolean): Promise<RefreshRun> {
  const { result, written, cpuMs, otherCpuMs } = await measured(copy, real, async () => {
    const answer = await worldApi(copy, 'POST', `/twins/stripe/refresh${force ? '?force=1' : ''}`);
    return { answer, body: expectStatus<{ refresh: RefreshReport }>(answer, 200, `POST …/twins/stripe/refresh${force ? '?force=1' : ''}`) };
  });
  const r = result.body.refresh;
  if (!r.ok) throw new Error(`the refresh answered 200 but its report is not ok: ${result.answer.text.slice(0, 400)}`);
  return {
    wallMs: round(result.answer.ms, 1) as number,
    report: { ok: r.ok, observedAt: r.observedAt, durationMs: r.durationMs, reads: r.reads, entries: r.entries, written: r.written, deleted: r.deleted },
    written,
    copyCpuMs: cpuMs,
    realCpuMs: otherCpuMs,
  };
}

/** The real account's customers walked a hundred at a time, as the refresh walks them (the world's token as the API key). */
async function walkCustomers(real: WorldServer): Promise<{ pages: number; wallMs: number; bytes: number; count: number }> {
  const headers = { authorization: `Bearer ${real.token}` };
  let after: string | null = null;
  let pages = 0;
  let bytes = 0;
  let count = 0;
  const started = performance.now();
  for (;;) {
    const query: string = `limit=100${after === null ? '' : `&starting_after=${after}`}`;
    const answer = await send('GET', `${real.url}/stripe/v1/customers?${query}`, headers);
    const page = expectStatus<{ data: { id: string }[]; has_more: boolean }>(answer, 200, 'GET /v1/customers');
    pages++;
    bytes += Buffer.byteLength(answer.text);
    count += page.data.length;
    if (!page.has_more || page.data.length === 0) break;
    after = page.data[page.data.length - 1]!.id;
  }
  return { pages, wallMs: performance.now() - started, bytes, count };
}

/** What the copy and the real account answer for one customer: the same object, the copy's with `x-kit-observed-at`. */
async function checkCopied(copy: WorldServer, real: WorldServer, id: string, observedAt: string | null): Promise<void> {
  const headers = (s: WorldServer) => ({ authorization: `Bearer ${s.token}` });
  const inCopy = await send('GET', `${copy.url}/stripe/v1/customers/${id}`, headers(copy));
  const inReal = await send('GET', `${real.url}/stripe/v1/customers/${id}`, headers(real));
  const a = expectStatus<unknown>(inCopy, 200, `GET the copy's /v1/customers/${id}`);
  const b = expectStatus<unknown>(inReal, 200, `GET the real account's /v1/customers/${id}`);
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`the copy's customer ${id} is not the real account's:\n${inCopy.text}\n${inReal.text}`);
  if (observedAt === null || inCopy.headers.get('x-kit-observed-at') !== observedAt) {
    throw new Error(`the copy's answer carries x-kit-observed-at ${inCopy.headers.get('x-kit-observed-at')}, not the refresh's ${observedAt}`);
  }
}

const ratioOf = (a: number, b: number, digits = 3): number | null => (b > 0 ? round(a / b, digits) : null);

export async function benchRefresh(worlds: Worlds, log: (line: string) => void): Promise<RefreshFigures> {
  const { real, copy, baseline } = await worlds.fresh();
  log(`bench roots: seeded ${worlds.customers} customers in ${real.seedMs.toFixed(0)} ms`);

  // The reads alone, first: both the walk and the refresh then find the real server warm.
  const walk = await walkCustomers(real);
  if (walk.count !== worlds.customers) throw new Error(`the real account lists ${walk.count} customers, not ${worlds.customers}`);
  log(`bench roots: walked ${walk.pages} pages of the real account's customers in ${walk.wallMs.toFixed(0)} ms`);

  const root = await rootAt(copy, real);
  worlds.markRefreshed();
  const first = await refreshOnce(copy, real, false);
  log(`bench roots: first refresh ${first.wallMs} ms, ${first.report.reads} reads, ${first.report.entries} entries, ${first.report.written} records written, data file +${first.written.fileBytes} B`);
  const status = expectStatus<{ resources: { type: string; count: number }[] }>(await worldApi(copy, 'GET', '/twins/stripe/status'), 200, 'GET …/twins/stripe/status');
  const copiedCustomers = status.resources.find((r) => r.type === 'customer')?.count ?? 0;
  if (copiedCustomers !== worlds.customers) throw new Error(`the copy holds ${copiedCustomers} customers, not ${worlds.customers}`);
  await checkCopied(copy, real, real.firstCustomer as string, first.report.observedAt);

  const unchanged = await refreshOnce(copy, real, true);
  log(`bench roots: unchanged refresh ${unchanged.wallMs} ms, ${unchanged.report.entries} entries, data file +${unchanged.written.fileBytes} B`);

  const beforeThrottle = { position: await stripePosition(copy), file: fileBytes(copy.dataFile).size };
  const third = await worldApi(copy, 'POST', '/twins/stripe/refresh');
  const retryAfter = third.headers.get('retry-after');
  const throttled = {
    status: third.status,
    code: (JSON.parse(third.text) as { error?: { code?: string } }).error?.code ?? '',
    retryAfterS: retryAfter === null ? null : Number(retryAfter),
    wroteEntries: (await stripePosition(copy)) - beforeThrottle.position,
    fileBytes: fileBytes(copy.dataFile).size - beforeThrottle.file,
  };
  // The stripe twin's own `refresh.atMost` is 30 s (the root sets none here).
  if (throttled.status !== 429 || throttled.code !== 'refresh_throttled' || throttled.retryAfterS === null || !(throttled.retryAfterS >= 1 && throttled.retryAfterS <= 30) || throttled.wroteEntries !== 0) {
    throw new Error(`a third refresh at once was not throttled: ${third.status} retry-after ${retryAfter} ${third.text.slice(0, 300)}; ${throttled.wroteEntries} entries written`);
  }
  log(`bench roots: a third refresh at once: ${throttled.status} ${throttled.code}, Retry-After ${throttled.retryAfterS}`);

  // The baseline: the same customers made through the baseline world's Stripe API over loopback.
  const headers = { authorization: `Bearer ${baseline.token}`, 'content-type': 'application/x-www-form-urlencoded' };
  const made = await measured(baseline, null, async () => {
    const t = performance.now();
    await inParallel(worlds.customers, SEED_IN_FLIGHT, async (i) => {
      const answer = await fetch(`${baseline.url}/stripe/v1/customers`, { method: 'POST', headers, body: customerForm(i) });
      const text = await answer.text();
      if (answer.status !== 200) throw new Error(`POST /v1/customers answered ${answer.status}: ${text.slice(0, 300)}`);
    });
    return performance.now() - t;
  });
  log(`bench roots: baseline, ${worlds.customers} creates over HTTP: ${made.result.toFixed(0)} ms, data file +${made.written.fileBytes} B`);

  return {
    command: COMMAND,
    customers: worlds.customers,
    root: root.replace(/:\d+\//, ':<port>/'),
    seedMs: round(real.seedMs, 1) as number,
    first,
    unchanged,
    throttled,
    copiedCustomers,
    baseline: {
      what: `the same ${worlds.customers} customers created through another world's Stripe API over loopback (POST /v1/customers, ${SEED_IN_FLIGHT} in flight, the world's token as the API key)`,
      inFlight: SEED_IN_FLIGHT,
      wallMs: round(made.result, 1) as number,
      written: made.written,
      serverCpuMs: made.cpuMs,
    },
    reads: { what: 'the real account\'s customers walked a hundred at a time by a plain client (GET /v1/customers?limit=100&starting_after=…)', pages: walk.pages, wallMs: round(walk.wallMs, 1) as number, bytes: walk.bytes },
    ratio: {
      wall: ratioOf(first.wallMs, made.result),
      cpu: ratioOf(first.copyCpuMs, made.cpuMs),
      fileBytes: ratioOf(first.written.fileBytes, made.written.fileBytes),
      logJsonBytes: ratioOf(first.written.logJsonBytes, made.written.logJsonBytes),
      overReads: ratioOf(first.wallMs, walk.wallMs, 2),
      unchangedOverFirst: ratioOf(unchanged.wallMs, first.wallMs),
    },
  };
}
