/**
 * A worker thread of storage.test.ts: `write-and-hang` stages a write and then spins, as a
 * runaway handler would, until the test ends the thread; any other message writes, waits for
 * durability and answers every key it then reads. Directory in workerData.dir.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openLmdbStorage } from './lmdb.js';

const port = parentPort;
if (port === null) throw new TypeError('turn-worker.child runs in a worker thread');
const storage = openLmdbStorage((workerData as { dir: string }).dir);
port.on('message', async (message: string) => {
  if (message === 'write-and-hang') {
    storage.transact((tx) => tx.put(['hung'], 1));
    port.postMessage('hanging');
    for (;;) {
      // spins until the thread is ended
    }
  }
  storage.transact((tx) => tx.put(['written'], 1));
  await storage.durable();
  port.postMessage([...storage.range({ start: [''], end: ['\u{10FFFF}'] })].map((kv) => kv.key));
});
port.postMessage('ready');
