/** A world's worker thread: opens the world's storage and serves its runner. */
import { workerData } from 'node:worker_threads';
import { join } from 'node:path';
import { openLmdbStorage } from '../store/index.js';
import { serveInWorker } from '../worker/index.js';
import { openWorldRunner, stateDir, type WorkerCall, type WorkerReply } from './open.js';
import type { LocalWorldOptions, WorldResponse } from './types.js';
import type { WorldRunner } from './world-runner.js';

const options = workerData as LocalWorldOptions;
let runner: Promise<WorldRunner> | undefined;

function start(): Promise<WorldRunner> {
  runner ??= (async () => {
    const storage = openLmdbStorage(stateDir(options.dir));
    const opened: Parameters<typeof openWorldRunner>[0] = { storage, world: options.world, twins: options.twins, scenarioDir: join(options.dir, '.kit', 'scenarios') };
    if (options.guestRuntime !== undefined) opened.guestRuntime = options.guestRuntime;
    return openWorldRunner(opened);
  })();
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
