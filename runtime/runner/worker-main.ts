/** A world's worker thread: opens the world's storage and serves its runner. */
import { workerData } from 'node:worker_threads';
import { serveInWorker } from '../worker/index.js';
import { openLocalRunner, type WorkerCall, type WorkerReply } from './open.js';
import type { LocalWorldOptions, WorldResponse } from './types.js';
import type { WorldRunner } from './world-runner.js';

const options = workerData as LocalWorldOptions;
let runner: Promise<WorldRunner> | undefined;

function start(): Promise<WorldRunner> {
  runner ??= openLocalRunner(options);
  return runner;
}

serveInWorker<WorkerCall, WorkerReply>(async (call) => {
  const r = await start();
  if (call.kind === 'close') {
    await r.close();
    await r.storage.close();
    return { status: 200, headers: {}, body: '' };
  }
  if (call.kind === 'stream') return r.streamCall(call.call);
  return r.handle(call.request);
});
