/**
 * Branch over HTTP at two parent sizes (issue 31, "Measure" 1): `POST {world_api}/branches`,
 * then the branch's first read (a Stripe customer list of ten, which opens the branch's world),
 * at a parent of `small` log entries and one of `big`. Both parents hold the same `small`
 * customers, made over HTTP; the big one's log is then made long through the engine: entries
 * that rewrite those customers with their own values, round robin, appended in-process with
 * `World.appendBatch` while the host is stopped, on the storage it keeps
 * (`<dir>/.kit-host/worlds/`, opened with `openLmdbStorage` and `WorldStore` as the host opens
 * it). So the two parents' state is the same and only the history's length differs: a branch
 * that costs the same at both is flat in it.
 *
 * Branches are made alternately of each parent (the order swapped every round), after a
 * warm-up of two of each; the figures are medians over the samples.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { openLmdbStorage } from '../../runtime/store/index.js';
import { WorldStore, type EntryDraft } from '../../runtime/world/index.js';
import { startHostChild, type HostChild } from './child.js';
import { createCustomer, createWorld, expectJson, headPosition, inParallel, listCustomers, median, onHost, quantile, round, timed, type MadeWorld } from './client.js';

export interface BranchOptions {
  dir: string;
  /** Entries (and customers) of the small parent. */
  small: number;
  /** Entries of the big parent. */
  big: number;
  /** Branches measured per parent. */
  branches: number;
}

interface Sample {
  postMs: number;
  firstReadMs: number;
  secondReadMs: number;
  /** The host's CPU (its live threads) over the POST and the first read, ms. */
  hostCpuMs: number;
}

export interface BranchParentFigures {
  parent: string;
  entries: number;
  samples: number;
  postMs: number | null;
  firstReadMs: number | null;
  totalMs: number | null;
  totalP90Ms: number | null;
  secondReadMs: number | null;
  /** The host's CPU per branch and first read, ms: the median over the samples (the machine's load inflates it less than wall time). */
  hostCpuMs: number | null;
}

export interface BranchFigures {
  command: string;
  customers: number;
  /** Seconds to make the customers over HTTP (both parents). */
  customersSeconds: number | null;
  /** Seconds to append the big parent's extra entries through the engine. */
  fillSeconds: number | null;
  /** The host's LMDB data file on disk after the fill, in MiB. */
  dataMiB: number | null;
  small: BranchParentFigures;
  big: BranchParentFigures;
  /** big / small, of the medians. */
  ratio: { post: number | null; firstRead: number | null; total: number | null; hostCpu: number | null };
}

const LIST = 10;
const WARMUP = 2;
const BATCH = 10_000;
const FLAGS = ['--max-open', '2000', '--idle', '3600'];

/** Appends entries to `name` until its stripe log holds `entries`, each rewriting one of its customers as it is. */
async function lengthenLog(worldsDir: string, name: string, entries: number, log: (line: string) => void): Promise<void> {
  const storage = openLmdbStorage(worldsDir);
  try {
    const world = new WorldStore(storage).openWorld(name);
    const customers: { id: string; value: unknown }[] = [];
    for (let after: string | undefined; ; ) {
      const page = world.listRecords('stripe', 'customer', { limit: 1000, ...(after !== undefined ? { after } : {}) });
      customers.push(...page.records);
      if (!page.hasMore || page.records.length === 0) break;
      after = page.records[page.records.length - 1]?.id;
    }
    if (customers.length === 0) throw new Error(`${name} has no customers to rewrite`);
    const cause: EntryDraft['cause'] = { kind: 'system', reason: 'bench: a long history' };
    let reported = Date.now();
    for (let head = world.head('stripe'); head < entries; head = world.head('stripe')) {
      const drafts: EntryDraft[] = [];
      for (let i = head; i < Math.min(entries, head + BATCH); i++) {
        const c = customers[i % customers.length] as { id: string; value: unknown };
        drafts.push({ cause, writes: [{ type: 'customer', id: c.id, value: c.value }] });
      }
      world.appendBatch('stripe', drafts);
      await storage.durable();
      if (Date.now() - reported > 10_000) {
        reported = Date.now();
        log(`bench host: ${name} at ${world.head('stripe').toLocaleString('en')} of ${entries.toLocaleString('en')} entries`);
      }
    }
  } finally {
    await storage.close();
  }
}

async function branchOnce(host: HostChild, parent: MadeWorld, customers: number): Promise<Sample> {
  let branch: MadeWorld | undefined;
  const cpuBefore = host.liveThreadsCpuMs();
  const postMs = await timed(async () => {
    const made = await expectJson<{ name: string; token: string; url: string; api: string }>(
      await fetch(`${parent.api}/branches`, { method: 'POST', headers: { 'x-kit-token': parent.token, 'content-type': 'application/json' }, body: '{}' }),
      201,
      `POST ${parent.name} branches`,
    );
    branch = { name: made.name, token: made.token, url: made.url, api: made.api };
  });
  const b = branch as MadeWorld;
  if (!b.url.startsWith(host.url)) throw new Error(`the branch's url ${b.url} is not under ${host.url}`);
  const expected = Math.min(LIST, customers);
  const read = async (): Promise<void> => {
    const ids = await listCustomers(b, LIST);
    if (ids.length !== expected) throw new Error(`${b.name} lists ${ids.length} customers, not ${expected}`);
  };
  const firstReadMs = await timed(read);
  const hostCpuMs = host.liveThreadsCpuMs() - cpuBefore;
  const secondReadMs = await timed(read);
  return { postMs, firstReadMs, secondReadMs, hostCpuMs };
}

function figures(parent: string, entries: number, samples: Sample[]): BranchParentFigures {
  const total = samples.map((s) => s.postMs + s.firstReadMs);
  return {
    parent,
    entries,
    samples: samples.length,
    postMs: round(median(samples.map((s) => s.postMs))),
    firstReadMs: round(median(samples.map((s) => s.firstReadMs))),
    totalMs: round(median(total)),
    totalP90Ms: round(quantile(total, 0.9)),
    secondReadMs: round(median(samples.map((s) => s.secondReadMs))),
    hostCpuMs: round(median(samples.map((s) => s.hostCpuMs))),
  };
}

const ratioOf = (a: number | null, b: number | null): number | null => (a === null || b === null || b === 0 ? null : round(a / b, 3));

export async function benchBranches(o: BranchOptions, log: (line: string) => void): Promise<BranchFigures> {
  if (!(o.big >= o.small && o.small >= 1)) throw new Error(`the big parent (${o.big}) must be at least the small one (${o.small}), which is at least 1`);
  // Made over HTTP, then the host stops so the engine can write to its storage alone.
  let host = await startHostChild(o.dir, FLAGS);
  let small: MadeWorld;
  let big: MadeWorld;
  let customersSeconds: number;
  try {
    small = await createWorld(host, 'bench', 'small', ['stripe']);
    big = await createWorld(host, 'bench', 'big', ['stripe']);
    const started = performance.now();
    for (const parent of [small, big]) await inParallel(o.small, 8, (i) => createCustomer(parent, i));
    customersSeconds = (performance.now() - started) / 1000;
  } finally {
    await host.stop();
  }
  log(`bench host: ${o.small} customers in each parent in ${customersSeconds.toFixed(1)} s; lengthening ${big.name}'s log to ${o.big.toLocaleString('en')} entries`);
  const worldsDir = join(o.dir, '.kit-host', 'worlds');
  const fillStarted = performance.now();
  await lengthenLog(worldsDir, big.name, o.big, log);
  const fillSeconds = (performance.now() - fillStarted) / 1000;
  const data = statSync(join(worldsDir, 'data.mdb'));
  log(`bench host: filled in ${fillSeconds.toFixed(1)} s; branching`);

  host = await startHostChild(o.dir, FLAGS);
  small = onHost(small, host);
  big = onHost(big, host);
  try {
    const entries = { small: await headPosition(small, 'stripe'), big: await headPosition(big, 'stripe') };
    if (entries.big < o.big) throw new Error(`${big.name} holds ${entries.big} entries, not ${o.big}`);
    for (let i = 0; i < WARMUP; i++) for (const parent of [small, big]) await branchOnce(host, parent, o.small);
    const samples: { small: Sample[]; big: Sample[] } = { small: [], big: [] };
    for (let i = 0; i < o.branches; i++) {
      const order = i % 2 === 0 ? (['small', 'big'] as const) : (['big', 'small'] as const);
      for (const which of order) samples[which].push(await branchOnce(host, which === 'small' ? small : big, o.small));
    }
    const s = figures(small.name, entries.small, samples.small);
    const b = figures(big.name, entries.big, samples.big);
    return {
      command: host.command,
      customers: o.small,
      customersSeconds: round(customersSeconds, 1),
      fillSeconds: round(fillSeconds, 1),
      dataMiB: round((data.blocks * 512) / 2 ** 20, 0),
      small: s,
      big: b,
      ratio: { post: ratioOf(b.postMs, s.postMs), firstRead: ratioOf(b.firstReadMs, s.firstReadMs), total: ratioOf(b.totalMs, s.totalMs), hostCpu: ratioOf(b.hostCpuMs, s.hostCpuMs) },
    };
  } finally {
    await host.stop();
  }
}
