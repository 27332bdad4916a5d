/**
 * Walks a branch pays for, on LMDB, in ms (`node dist/bench/engine/branch-walks.js [N]`):
 * - a branch performing N scheduled moves of its own: each finds the first due one with a
 *   list of limit 1, then deletes it, as the runner does (a branch that kept its deletions
 *   in head keys stepped over every one performed before: 2,000 took 191 s);
 * - a checkpoint of the root world at position 1, after those N records (a walk at a past
 *   position stops at the id bounds noted every 1,024 positions; it stepped over all N);
 * - branch creation in a world of 2 twins of 40 types each (the base's id bounds are noted);
 * - a list of limit 1 in a branch whose base made N more records after the cut, with ids
 *   above every id at the cut (as ordered ids are): the walk of the base's part stops at the
 *   greatest id the base had when the branch was made (it stepped over all N: 20,000 took
 *   185 ms).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLmdbStorage } from '../../runtime/store/index.js';
import { WorldStore } from '../../runtime/world/index.js';
import type { EntryDraft } from '../../runtime/world/types.js';

const N = Number(process.argv[2] ?? 5000);
const dir = mkdtempSync(join(tmpdir(), 'kit-bench-branch-walks-'));
const storage = openLmdbStorage(dir);
const store = new WorldStore(storage, { now: () => Date.parse('2026-01-01T00:00:00Z') });
const cause: EntryDraft['cause'] = { kind: 'system', reason: 'bench' };
const due = (i: number): string => String(1e14 + i);
// As between a server's requests: the turn's staged writes committed, so reads go to LMDB.
const committed = (): Promise<void> => storage.durable();

const root = store.createWorld('root', { twins: ['t'] });
root.append('t', { cause, writes: [{ type: 'customer', id: 'c0', value: { n: 0 } }] });
const branch = root.branch({ label: 'moves' }).world;
for (let i = 0; i < N; i++) branch.append('t', { cause, writes: [{ type: '__due', id: due(i), value: { i } }] });
await committed();
let t0 = performance.now();
for (let i = 0; i < N; i++) {
  const first = branch.listRecords('t', '__due', { limit: 1 }).records[0];
  if (first?.id !== due(i)) throw new Error(`the first due move is ${String(first?.id)}, not ${due(i)}`);
  branch.append('t', { cause, writes: [{ type: '__due', id: first.id, value: null }] });
  if (i % 100 === 99) await committed();
}
console.log(`branch performing ${N} moves of its own: ${(performance.now() - t0).toFixed(0)} ms`);

const early = root.branch({ label: 'early' }).world;
for (let i = 0; i < N; i += 1000) {
  root.append('t', { cause, writes: Array.from({ length: Math.min(1000, N - i) }, (_, j) => ({ type: 'customer', id: `c${String(i + j + 1).padStart(8, '0')}`, value: { n: i + j + 1 } })) });
}
await committed();
t0 = performance.now();
const page = early.listRecords('t', 'customer', { limit: 1, reverse: true });
if (page.records[0]?.id !== 'c0') throw new Error('the branch sees a record made after its cut');
console.log(`branch list (limit 1, newest first) past ${N} records its base made after the cut: ${(performance.now() - t0).toFixed(1)} ms`);
t0 = performance.now();
const early1 = Buffer.from(root.checkpoint('t', 1)).toString();
if (!early1.includes('"c0"') || early1.includes('"c00000001"')) throw new Error('the checkpoint at position 1 is wrong');
console.log(`root checkpoint at position 1, ${N} records made after it: ${(performance.now() - t0).toFixed(1)} ms`);

// What noting the base's id bounds costs a branch: one seek per type with head keys and one
// per type with deletion marks, for each twin.
const TYPES = 40;
const wide = store.createWorld('wide', { twins: ['a', 'b'] });
for (const twin of ['a', 'b']) {
  for (let t = 0; t < TYPES; t++) {
    const writes = Array.from({ length: 100 }, (_, i) => ({ type: `type${t}`, id: `id_${String(i).padStart(5, '0')}`, value: { i } }));
    wide.append(twin, { cause, writes });
    wide.append(twin, { cause, writes: writes.slice(0, 10).map((w) => ({ ...w, value: null })) });
  }
}
await committed();
for (let round = 0; round < 3; round++) {
  t0 = performance.now();
  for (let i = 0; i < 500; i++) wide.branch();
  await committed();
  console.log(`branch creation, 2 twins of ${TYPES} types each: ${(((performance.now() - t0) * 1000) / 500).toFixed(0)} µs per branch`);
}
await storage.close();
rmSync(dir, { recursive: true, force: true });
