/** A world's worker thread: opens the world's storage and serves its runner. */
import { workerData } from 'node:worker_threads';
import { serveInWorker } from '../worker/index.js';
import { openLocalRunner, type WorkerCall, type WorkerReply } from './open.js';
import type { LocalWorldOptions } from './types.js';
import { requestFromWire, responseToWire } from './wire.js';
import type { WorldRunner } from './world-runner.js';

const options = workerData as LocalWorldOptions;
let runner: Promise<WorldRunner> | undefined;

function start(): Promise<WorldRunner> {
  runner ??= openLocalRunner(options);
  return runner;
}

serveInWorker<WorkerCall, WorkerReply>(async (call) => {
  const r = await start();
  if (Array.isArray(call)) return responseToWire(await r.handle(requestFromWire(call)));
  if (call.kind === 'close') {
    await r.close();
    await r.storage.close();
    return responseToWire({ status: 200, headers: {}, body: '' });
  }
  return r.streamCall(call.call);
});
