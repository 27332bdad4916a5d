/**
 * get, put and range on `SqliteStorage` over sql.js against `MemoryStorage` (the baseline, in
 * the same run): what the storage's own code (key bytes, msgpack, the SQL it sends) adds. sql.js
 * is SQLite compiled to WebAssembly with a byte-by-byte copy of every BLOB, so the SQLite side is
 * slower than a Durable Object's native SQLite would be; the ratio is an upper bound.
 *
 * The store holds 2,000 customers shaped like the Stripe twin's (~1 KB packed) under
 * `['w', 'stripe', 'head', 'customer', id]`. Tasks: get one; put one (a transaction of one
 * write); range a page of 20 (and 20 in reverse, as the log reads its tail); and a transaction of
 * 5 writes (a Stripe create: counter, record, list index, event, its index).
 *
 *   npx esbuild host/edge/storage/bench.ts --bundle --platform=node --format=esm \
 *     --packages=external --outfile=host/edge/storage/.bench.mjs && node host/edge/storage/.bench.mjs
 *
 * KIT_BENCH_TIME (ms per task and round, default 1000), KIT_BENCH_ROUNDS (default 3; the lowest
 * mean of each task is kept).
 */
import { Bench } from 'tinybench';
import { MemoryStorage } from '../../../runtime/store/memory.js';
import type { Key, Storage } from '../../../runtime/store/types.js';
import { SqlJsDatabase, loadSqlJs } from './sql-js.js';
import { SqliteStorage } from './sqlite.js';

const TIME = Number(process.env.KIT_BENCH_TIME ?? 1000);
const ROUNDS = Number(process.env.KIT_BENCH_ROUNDS ?? 3);
const RECORDS = 2000;

function customer(n: number): Record<string, unknown> {
  const id = `cus_${n.toString(36).padStart(14, '0')}`;
  return {
    id, object: 'customer', address: null, balance: 0, created: 1767225600 + n, currency: null, default_source: null,
    delinquent: false, description: 'A customer made by the storage benchmark', discount: null, email: `customer${n}@example.com`,
    invoice_prefix: n.toString(16).toUpperCase().padStart(8, '0'),
    invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
    livemode: false, metadata: { order: String(n) }, name: `Customer ${n}`, next_invoice_sequence: 1, phone: null,
    preferred_locales: [], shipping: null, tax_exempt: 'none', test_clock: null,
  };
}
const head = (n: number): Key => ['w', 'stripe', 'head', 'customer', `cus_${n.toString(36).padStart(14, '0')}`];

function tasksFor(s: Storage): [string, () => unknown][] {
  s.transact((tx) => { for (let n = 0; n < RECORDS; n++) tx.put(head(n), customer(n)); });
  let i = 0;
  let next = RECORDS;
  const page = { start: ['w', 'stripe', 'head', 'customer'] as Key, end: ['w', 'stripe', 'head', 'customer\u0000'] as Key };
  return [
    ['get', () => s.get(head((i = (i + 7919) % RECORDS)))],
    ['put (1 write)', () => s.transact((tx) => tx.put(head((i = (i + 7919) % RECORDS)), customer(i)))],
    ['range 20', () => { let n = 0; for (const kv of s.range({ ...page, start: head((i = (i + 7919) % (RECORDS - 20))), limit: 20 })) n += kv.key.length; return n; }],
    ['range 20 reverse', () => { let n = 0; for (const kv of s.range({ ...page, reverse: true, limit: 20 })) n += kv.key.length; return n; }],
    ['transact (5 writes, 2 new)', () => s.transact((tx) => {
      const n = next++;
      const c = customer(n);
      tx.put(['w', 'stripe', 'seq'], n);
      tx.put(head(n), c);
      tx.put(['w', 'stripe', 'list', 'customer', n], c);
      tx.put(['w', 'stripe', 'head', 'event', `evt_${n}`], { id: `evt_${n}`, type: 'customer.created', data: { object: c } });
      tx.put(['w', 'stripe', 'list', 'event', n], `evt_${n}`);
    })],
  ];
}

const sqlJs = await loadSqlJs();
const stores: [string, () => Storage][] = [
  ['memory', () => new MemoryStorage()],
  ['sqlite (sql.js)', () => new SqliteStorage(new SqlJsDatabase(sqlJs))],
];
const best = new Map<string, number>();
for (let round = 0; round < ROUNDS; round++) {
  for (const [store, make] of stores) {
    const bench = new Bench({ time: TIME, warmupTime: 100 });
    for (const [name, fn] of tasksFor(make())) bench.add(`${store}|${name}`, fn as () => void);
    await bench.run();
    for (const t of bench.tasks) {
      const r = t.result as { latency?: { mean: number } } | undefined;
      if (r?.latency === undefined) throw new Error(`task ${t.name} failed: ${JSON.stringify(t.result)}`);
      best.set(t.name, Math.min(best.get(t.name) ?? Infinity, r.latency.mean * 1000));
    }
  }
}
console.log(`| task | memory µs | sqlite (sql.js) µs | × memory |\n|---|---:|---:|---:|`);
for (const [name] of tasksFor(new MemoryStorage())) {
  const m = best.get(`memory|${name}`) as number;
  const q = best.get(`sqlite (sql.js)|${name}`) as number;
  console.log(`| ${name} | ${m.toFixed(2)} | ${q.toFixed(2)} | ${(q / m).toFixed(1)} |`);
}
