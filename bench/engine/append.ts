/**
 * One focused figure: the cost of `World.append` for an entry shaped like a Stripe
 * customer create (5 writes, ~3 KB: the seq counter, the customer, its list-index copy,
 * the event and its list-index copy; four of them new records of four types, so counts
 * move), on LMDB in a temporary directory.
 *
 * To compare with an earlier engine, copy this file into a git worktree of that commit and
 * bundle it there too, then alternate runs of the two (bench/README.md, Engine):
 *   npx esbuild bench/engine/append.ts --bundle --platform=node --format=esm \
 *     --packages=external --outfile=bench/engine/.append.mjs && node bench/engine/.append.mjs
 * Options (env): KIT_BENCH_TIME (ms per task and round, default 1000), KIT_BENCH_ROUNDS
 * (default 3; the lowest mean and median are kept), KIT_BENCH_PROFILE=<seconds>: only append (commit
 * only) for that long, for `node --cpu-prof`; KIT_BENCH_READS=1: instead of appends, reads of
 * what was appended (log and timeline pages, one entry, a history cut).
 */
import { setImmediate as turnEnd } from 'node:timers/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bench } from 'tinybench';
import { openLmdbStorage } from '../../runtime/store/index.js';
import { type EntryDraft, WorldStore } from '../../runtime/world/index.js';

const TIME = Number(process.env.KIT_BENCH_TIME ?? 1000);
const ROUNDS = Number(process.env.KIT_BENCH_ROUNDS ?? 3);
const GROUP = 64;
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const ACCT = 'acct_1Bench000000000';

let n = 0;
/** A customer create as the Stripe twin writes it (store.ts insert + the event). */
function createDraft(): EntryDraft {
  n++;
  const id = `cus_${n.toString(36).padStart(14, '0')}`;
  const created = 1767225600 + n;
  const customer = {
    id,
    object: 'customer',
    address: null,
    balance: 0,
    created,
    currency: null,
    default_source: null,
    delinquent: false,
    description: 'A customer made by the engine benchmark',
    discount: null,
    email: `customer${n}@example.com`,
    invoice_prefix: n.toString(16).toUpperCase().padStart(8, '0'),
    invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
    livemode: false,
    metadata: { order: String(n) },
    name: `Customer ${n}`,
    next_invoice_sequence: 1,
    phone: null,
    preferred_locales: [],
    shipping: null,
    tax_exempt: 'none',
    test_clock: null,
  };
  const evt = `evt_${n.toString(36).padStart(24, '0')}`;
  const event = {
    id: evt,
    object: 'event',
    api_version: '2025-09-30.clover',
    created,
    data: { object: customer },
    livemode: false,
    pending_webhooks: 0,
    request: { id: `req_${n.toString(36).padStart(14, '0')}`, idempotency_key: `idem-${n}` },
    type: 'customer.created',
  };
  const seq = 2 * n;
  const pad = (s: number): string => String(s).padStart(12, '0');
  return {
    cause: { kind: 'request', method: 'POST', route: 'POST /v1/customers', path: '/v1/customers', status: 200, requestId: `req_${n}` },
    traceparent: `00-${n.toString(16).padStart(32, '0')}-00f067aa0ba902b7-01`,
    events: [{ type: 'customer.created', data: { id } }],
    writes: [
      { type: 'seq', id: 'n', value: seq },
      { type: 'customer', id: `${ACCT}/${id}`, value: { s: seq - 1, o: customer } },
      { type: `ix.customer.${ACCT}`, id: pad(seq - 1), value: customer },
      { type: 'event', id: `${ACCT}/${evt}`, value: { s: seq, o: event } },
      { type: `ix.event.${ACCT}`, id: pad(seq), value: event },
    ],
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kit-bench-append-'));
  const storage = openLmdbStorage(dir);
  const store = new WorldStore(storage, { now: () => T0 });
  const w = store.createWorld('appends', { twins: ['stripe'] });
  const bytes = JSON.stringify(createDraft().writes).length;
  // A log that is not empty: 10,000 creates first.
  for (let i = 0; i < 100; i++) w.appendBatch('stripe', Array.from({ length: 100 }, createDraft));
  const profile = Number(process.env.KIT_BENCH_PROFILE ?? 0);
  if (profile > 0) {
    const end = Date.now() + profile * 1000;
    let k = 0;
    while (Date.now() < end) {
      for (let i = 0; i < 100; i++, k++) w.append('stripe', createDraft());
      // The storage commits a turn's writes at setImmediate.
      await turnEnd();
    }
    console.log(`${k} appends in ${profile} s: ${((profile * 1e6) / k).toFixed(2)} µs each`);
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
    return;
  }

  const tasks: [string, () => unknown, number][] = [
    // The storage commits a turn's writes at setImmediate: one append per turn is one commit.
    ['append, committed at the end of its turn (no durable)', async () => { w.append('stripe', createDraft()); await turnEnd(); }, 1],
    [`${GROUP} concurrent appends, each awaiting durable()`, async () => {
      const waits: Promise<void>[] = [];
      for (let i = 0; i < GROUP; i++) {
        w.append('stripe', createDraft());
        waits.push(w.durable());
      }
      await Promise.all(waits);
    }, GROUP],
    [`appendBatch of ${GROUP} entries, committed at the end of the turn`, async () => { w.appendBatch('stripe', Array.from({ length: GROUP }, createDraft)); await turnEnd(); }, GROUP],
    ['create draft only (the benchmark\'s own cost, not subtracted)', () => createDraft(), 1],
  ];
  // Mean and median per entry, the lowest of each over the rounds. The mean is the figure
  // for throughput: it carries garbage collection and LMDB's occasional page work, which
  // the median leaves out.
  // Reads of what was appended: a log page, a timeline page, one entry, a history cut.
  const reads: [string, () => unknown, number][] = [
    ['log page of 100 entries', () => w.log('stripe', { after: w.head('stripe') - 100, limit: 100 }), 100],
    ['timeline page of 50 entries', () => w.timeline({ limit: 50 }), 50],
    ['one entry', () => w.entry('stripe', w.head('stripe') - 7), 1],
    ['history cut', () => w.historyCut(new Date(T0).toISOString()), 1],
  ];
  if (process.env.KIT_BENCH_READS === '1') tasks.splice(0, tasks.length, ...reads);
  const best = tasks.map(() => ({ mean: Infinity, p50: Infinity }));
  for (let round = 0; round < ROUNDS; round++) {
    const bench = new Bench({ time: TIME, iterations: 10, warmupTime: 100, warmupIterations: 10 });
    for (const [name, fn] of tasks) bench.add(name, fn as () => Promise<void>);
    await bench.run();
    bench.tasks.forEach((t, i) => {
      const r = t.result as { latency?: { mean: number; p50: number } } | undefined;
      if (r?.latency === undefined) throw new Error(`task ${t.name} failed: ${JSON.stringify(t.result)}`);
      const per = 1000 / (tasks[i]?.[2] ?? 1);
      const b = best[i] as { mean: number; p50: number };
      b.mean = Math.min(b.mean, r.latency.mean * per);
      b.p50 = Math.min(b.p50, r.latency.p50 * per);
    });
  }
  console.log(`${process.env.KIT_BENCH_LABEL ?? 'this checkout'}: entry of 5 writes, ${bytes} B of JSON; ${w.head('stripe')} entries at the end`);
  tasks.forEach(([name], i) => {
    const b = best[i] as { mean: number; p50: number };
    console.log(`  ${name}: mean ${b.mean.toFixed(2)} µs, median ${b.p50.toFixed(2)} µs per op (an entry, for tasks of several)`);
  });
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
