/**
 * Reads of history and through branches, where a record's newest version (in its head key)
 * and its superseded versions (version keys) are both consulted: on LMDB, 2,000 customers
 * written once, then the first 200 rewritten ten times each; a branch as of now and one at
 * a past instant. Median per read (tinybench).
 *
 *   npx esbuild bench/engine/history-reads.ts --bundle --platform=node --format=esm \
 *     --packages=external --outfile=bench/engine/.history-reads.mjs && node bench/engine/.history-reads.mjs
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bench } from 'tinybench';
import { openLmdbStorage } from '../../runtime/store/index.js';
import { WorldStore } from '../../runtime/world/index.js';
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const dir = mkdtempSync(join(tmpdir(), 'kit-bench-history-'));
const storage = openLmdbStorage(dir);
const store = new WorldStore(storage, { now: () => T0 });
const w = store.createWorld('a', { twins: ['stripe'] });
const cause = { kind: 'system' as const, reason: 'x' };
// 2,000 customers written once, then 20,000 updates of the first 200 (10 each).
w.appendBatch('stripe', Array.from({ length: 2000 }, (_, i) => ({ cause, occurredAt: new Date(T0 + i * 1000).toISOString(), writes: [{ type: 'customer', id: `cus_${i}`, value: { n: i, email: `c${i}@x.com` } }] })));
w.appendBatch('stripe', Array.from({ length: 2000 }, (_, i) => ({ cause, occurredAt: new Date(T0 + (2000 + i) * 1000).toISOString(), writes: [{ type: 'customer', id: `cus_${i % 200}`, value: { n: -i } }] })));
w.setClock(new Date(T0 + 4000 * 1000).toISOString());
const now = w.branch().world;
const past = w.branch({ at: new Date(T0 + 3000 * 1000).toISOString() }).world;
const bench = new Bench({ time: 500 });
bench.add('root, historical read of an updated record (at 3000)', () => w.getRecord('stripe', 'customer', 'cus_50', 3000));
bench.add('root, historical read of a record not updated since (at 3000)', () => w.getRecord('stripe', 'customer', 'cus_1500', 3000));
bench.add('branch as of now, head read through to the parent (record untouched)', () => now.getRecord('stripe', 'customer', 'cus_1500'));
bench.add('branch at a past instant, read of a record the parent updated after the cut', () => past.getRecord('stripe', 'customer', 'cus_50'));
bench.add('branch at a past instant, list 100 at head', () => past.listRecords('stripe', 'customer', { limit: 100 }));
bench.add('root, list 100 at 3000', () => w.listRecords('stripe', 'customer', { limit: 100, at: 3000 }));
await bench.run();
for (const t of bench.tasks) console.log(`${process.argv[2] ?? ''} ${t.name}: ${((t.result as { latency: { p50: number } }).latency.p50 * 1000).toFixed(2)} µs`);
await storage.close();
rmSync(dir, { recursive: true, force: true });
