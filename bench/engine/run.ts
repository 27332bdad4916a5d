/**
 * World engine micro benchmarks (issue 2), on LMDB in a temporary directory.
 * Every figure is reported with a ratio against a baseline measured in the same run.
 *
 * Run: npx tsc -p tsconfig.json && node dist/bench/engine/run.js
 *  or: npx esbuild bench/engine/run.ts --bundle --platform=node --format=esm --packages=external \
 *        --outfile=bench/engine/.run.mjs && node bench/engine/.run.mjs
 * Options (env): KIT_BENCH_BIG (entries of the big log, default 1000000), KIT_BENCH_TIME (ms per
 * task and round, default 400), KIT_BENCH_ROUNDS (default 5; the lowest median is kept).
 */
import { setImmediate as turnEnd } from 'node:timers/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bench } from 'tinybench';
import { openLmdbStorage } from '../../runtime/store/index.js';
import { type EntryDraft, type World, WorldStore } from '../../runtime/world/index.js';
import { writeBenchJson } from '../results/json.js';

const BIG = Number(process.env.KIT_BENCH_BIG ?? 1_000_000);
const TIME = Number(process.env.KIT_BENCH_TIME ?? 400);
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const GROUP = 64;
const ROUNDS = Number(process.env.KIT_BENCH_ROUNDS ?? 5);

const dir = mkdtempSync(join(tmpdir(), 'kit-bench-engine-'));
const storage = openLmdbStorage(dir);
const store = new WorldStore(storage, { now: () => T0 });

const cause: EntryDraft['cause'] = { kind: 'request', method: 'POST', route: 'POST /v1/customers/:id', path: '/v1/customers/x', status: 200, requestId: 'req' };

/** `entries` entries, one second apart, each rewriting one of `records` customers (round robin). */
function build(name: string, entries: number, records: number): World {
  const w = store.createWorld(name, { twins: ['stripe'] });
  const batch = 10_000;
  for (let start = 0; start < entries; start += batch) {
    const drafts: EntryDraft[] = [];
    for (let i = start; i < Math.min(entries, start + batch); i++) {
      drafts.push({
        cause,
        occurredAt: new Date(T0 + i * 1000).toISOString(),
        writes: [{ type: 'customer', id: `cus_${String(i % records).padStart(7, '0')}`, value: { n: i, email: `c${i % records}@example.com`, balance: i % 997 } }],
      });
    }
    w.appendBatch('stripe', drafts);
  }
  w.setClock(new Date(T0 + entries * 1000).toISOString());
  return w;
}

function mid(entries: number): string {
  return new Date(T0 + Math.floor(entries / 2) * 1000 + 500).toISOString();
}

interface Row { group: string; task: string; meanUs: number; perOp: number; baseline: string }
const rows: Row[] = [];

/**
 * Runs the tasks of one group ROUNDS times and keeps, per task, the lowest median: the
 * machine is shared, and a median of the quietest round is the steadiest figure. Ratios
 * are against the group's baseline task, measured in the same rounds.
 */
async function measure(group: string, tasks: [string, () => unknown, number?][], baseline = 0): Promise<void> {
  const best = tasks.map(() => Infinity);
  for (let round = 0; round < ROUNDS; round++) {
    const bench = new Bench({ time: TIME, iterations: 10, warmupTime: 50, warmupIterations: 3 });
    for (const [name, fn] of tasks) bench.add(name, fn as () => Promise<void>);
    await bench.run();
    bench.tasks.forEach((t, i) => {
      const r = t.result as { latency?: { p50: number } } | undefined;
      if (r?.latency === undefined) throw new Error(`task ${t.name} failed: ${JSON.stringify(t.result)}`);
      const us = (r.latency.p50 * 1000) / (tasks[i]?.[2] ?? 1); // µs per op
      best[i] = Math.min(best[i] as number, us);
    });
  }
  const base = best[baseline] as number;
  tasks.forEach(([name], i) => {
    rows.push({ group, task: name, meanUs: best[i] as number, perOp: (best[i] as number) / base, baseline: tasks[baseline]?.[0] ?? '' });
  });
}

async function main(): Promise<void> {
  const t = Date.now();
  const small = build('log-1k', 1_000, 1_000);
  const mid100k = build('log-100k', 100_000, 1_000);
  const big = build('log-big', BIG, 1_000);
  const s10k = build('state-10k', 10_000, 10_000);
  const s100k = build('state-100k', 100_000, 100_000);
  const buildSeconds = (Date.now() - t) / 1000;
  console.log(`built ${(1_000 + 100_000 + BIG + 10_000 + 100_000).toLocaleString('en')} entries in ${buildSeconds.toFixed(1)} s`);

  // Append throughput with group commit.
  const appends = store.createWorld('appends', { twins: ['stripe'] });
  let k = 0;
  const draft = (): EntryDraft => ({ cause, writes: [{ type: 'customer', id: `cus_${k++ % 5000}`, value: { n: k } }] });
  await measure('append (per entry)', [
    ['append + await durable(), one at a time', async () => { appends.append('stripe', draft()); await appends.durable(); }],
    [`${GROUP} concurrent appends, each awaiting durable()`, async () => {
      const waits: Promise<void>[] = [];
      for (let i = 0; i < GROUP; i++) { appends.append('stripe', draft()); waits.push(appends.durable()); }
      await Promise.all(waits);
    }, GROUP],
    // The storage commits a turn's writes at setImmediate: one append per turn is one commit.
    ['append, committed at the end of its turn (no durable)', async () => { appends.append('stripe', draft()); await turnEnd(); }],
  ]);

  // Reads: raw storage get as the baseline.
  const id = 'cus_0000500';
  await measure('record reads', [
    ['raw storage.get of one key (baseline)', () => storage.get(['#world', 'log-big'])],
    [`head read, ${BIG.toLocaleString('en')}-entry log`, () => big.getRecord('stripe', 'customer', id)],
    [`historical read (at ${BIG / 2}), ${BIG.toLocaleString('en')}-entry log`, () => big.getRecord('stripe', 'customer', id, BIG / 2)],
    ['head read, 1k-entry log', () => small.getRecord('stripe', 'customer', id)],
    ['historical read (at 500), 1k-entry log', () => small.getRecord('stripe', 'customer', id, 500)],
  ]);

  await measure('branch creation (now)', [
    ['branch of a 1k-entry world', () => small.branch()],
    [`branch of a ${BIG.toLocaleString('en')}-entry world`, () => big.branch()],
  ]);
  await measure('branch creation (at a past instant)', [
    ['branch at mid-history, 1k entries', () => small.branch({ at: mid(1_000) })],
    [`branch at mid-history, ${BIG.toLocaleString('en')} entries`, () => big.branch({ at: mid(BIG) })],
  ]);
  await measure('history cut', [
    ['cut of a 1k-entry log', () => small.historyCut(mid(1_000))],
    [`cut of a ${BIG.toLocaleString('en')}-entry log`, () => big.historyCut(mid(BIG))],
  ]);
  await measure('checkpoint, same state (1k records)', [
    ['1k-entry log', () => small.checkpoint('stripe')],
    ['100k-entry log', () => mid100k.checkpoint('stripe')],
    [`${BIG.toLocaleString('en')}-entry log`, () => big.checkpoint('stripe')],
  ]);
  await measure('checkpoint, growing state', [
    ['1k records', () => small.checkpoint('stripe')],
    ['10k records', () => s10k.checkpoint('stripe')],
    ['100k records', () => s100k.checkpoint('stripe')],
  ]);

  console.log(`\n| group | task | median per op | ratio | baseline |\n|---|---|---:|---:|---|`);
  for (const r of rows) {
    const mean = r.meanUs >= 1000 ? `${(r.meanUs / 1000).toFixed(2)} ms` : `${r.meanUs.toFixed(2)} µs`;
    console.log(`| ${r.group} | ${r.task} | ${mean} | ${r.perOp.toFixed(2)} | ${r.baseline} |`);
  }
  const bytes = (w: World): number => w.checkpoint('stripe').byteLength;
  console.log(`\ncheckpoint sizes: 1k records ${bytes(small)} B, 10k ${bytes(s10k)} B, 100k ${bytes(s100k)} B`);
  // meanUs is the lowest median over the rounds (the column printed as "median per op"); perOp the ratio.
  writeBenchJson({ node: process.version, rows });
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
