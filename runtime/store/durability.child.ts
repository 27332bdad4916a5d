/**
 * The child process of durability.test.ts: appends entries to a world in a stream, in
 * bursts that share group commits, and prints each position once `durable()` has resolved
 * for it. The test SIGKILLs it mid-stream. Directory in KIT_CRASH_DIR.
 */
import { WorldStore } from '../world/world.js';
import { openLmdbStorage } from './lmdb.js';

const dir = process.env.KIT_CRASH_DIR;
if (dir === undefined) throw new TypeError('KIT_CRASH_DIR is required');
const storage = openLmdbStorage(dir);
const store = new WorldStore(storage);
const world = store.hasWorld('crash') ? store.openWorld('crash') : store.createWorld('crash', { twins: ['log'] });

/** Every entry writes WRITES records plus the shared `tip` record, all tagged with its position. */
export const WRITES = 6;

async function main(): Promise<void> {
  for (let burst = 0; ; burst++) {
    const size = 1 + (burst % 7);
    const waits: Promise<number>[] = [];
    for (let i = 0; i < size; i++) {
      const position = world.head('log') + 1;
      const writes = [];
      for (let k = 0; k < WRITES; k++) {
        writes.push({ type: 'rec', id: `p${position}_k${k}`, value: { position, k, pad: 'x'.repeat(200 + k * 50) } });
      }
      writes.push({ type: 'tip', id: 'tip', value: { position } });
      const entry = world.append('log', { cause: { kind: 'system', reason: 'crash-test' }, writes });
      waits.push(world.durable().then(() => entry.position));
    }
    const done = await Promise.all(waits);
    process.stdout.write(done.map((p) => `${p}\n`).join(''));
  }
}

void main();
