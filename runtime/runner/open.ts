/**
 * Opening a world to serve on Node: from its folder (LMDB state, scenario files) in this thread,
 * or in a worker thread of its own under a watchdog (`openLocalWorld`, what servers use). Opening
 * a runner over any storage is open-runner.ts, re-exported here; importing this file makes Node's
 * engines the default (node-engines.ts).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openLmdbStorage } from '../store/index.js';
import { compiledScript, SupervisedWorker } from '../worker/index.js';
import { errorResponse } from './answers.js';
import './node-engines.js';
import { openWorldRunner, worldCode, type WorldRunnerOptions } from './open-runner.js';
import type { ScenarioFiles } from './scenarios.js';
import type { WorldRunner } from './world-runner.js';
import { requestToWire, responseFromWire, type RequestWire, type ResponseWire } from './wire.js';
import type { LocalWorldHandle, LocalWorldOptions, StreamCall, StreamResult, WorldHandle } from './types.js';
import { LocalWorldFiles } from './local-files.js';
import { createNodeOutbound } from '../roots/node-outbound.js';
import { createSealer, sealingKeyBytes } from '../roots/sealing.js';

export { openWorldRunner, worldCode, type WorldRunnerOptions } from './open-runner.js';

/** Each twin's scenario kept as `<dir>/<vendor>.<json|yaml>`, beside a local world's state. */
export function scenarioFolder(dir: string): ScenarioFiles {
  const remove = (vendor: string): void => {
    for (const ext of ['json', 'yaml']) rmSync(join(dir, `${vendor}.${ext}`), { force: true });
  };
  return {
    write(vendor, format, source) {
      mkdirSync(dir, { recursive: true });
      remove(vendor);
      writeFileSync(join(dir, `${vendor}.${format}`), source);
    },
    remove,
  };
}

/** What the main thread sends a world's worker: a request as an array (wire.ts), a stream call, or close. */
export type WorkerCall = RequestWire | { kind: 'stream'; call: StreamCall } | { kind: 'close' };
/** What a world's worker answers: a response as an array (wire.ts), or a stream call's result. */
export type WorkerReply = ResponseWire | StreamResult;

/** The state folder of a local world. */
export function stateDir(dir: string): string {
  return join(dir, '.kit', 'world');
}

/** The runner of a world served from a directory, in this thread: its LMDB state and its scenario folder. */
export async function openLocalRunner(options: LocalWorldOptions): Promise<WorldRunner> {
  if (options.colocate !== undefined) throw new TypeError('a world with colocated files opens with openLocalWorld in this thread');
  return (await openRunnerWithFiles(options)).runner;
}

/** The runner, and its colocated files when a world file declares some (started: put in force, watched). */
async function openRunnerWithFiles(options: LocalWorldOptions): Promise<{ runner: WorldRunner; files: LocalWorldFiles | null }> {
  const folder = scenarioFolder(join(options.dir, '.kit', 'scenarios'));
  const files = options.colocate === undefined ? null : new LocalWorldFiles(options.colocate, options.dir, options.report ?? ((line) => console.error(line)), folder);
  const storage = openLmdbStorage(stateDir(options.dir));
  const opened: WorldRunnerOptions = { storage, world: options.world, twins: options.twins, scenarioFiles: files?.scenarioFiles() ?? folder };
  if (options.guestRuntime !== undefined) opened.guestRuntime = options.guestRuntime;
  const roots = options.roots;
  if (roots !== undefined) {
    const loopback = roots.loopback === true;
    // A world of this machine alone delivers its webhooks to any receiver the app registered.
    opened.outbound = createNodeOutbound({ loopback, webhooksAnywhere: loopback, ...(roots.proxy !== undefined ? { proxy: roots.proxy } : {}) });
    opened.outboundLoopback = loopback;
    if (roots.sealingKey !== undefined) opened.sealer = createSealer(sealingKeyBytes(roots.sealingKey));
  }
  let runner: WorldRunner;
  try {
    runner = await openWorldRunner(opened);
  } catch (e) {
    await storage.close();
    throw e;
  }
  if (files !== null) await files.start(runner);
  return { runner, files };
}

/**
 * A world served from a directory: by default in this thread, its untrusted code in its sandbox
 * lanes (worker threads under a watchdog); with `thread: 'worker'`, the whole world in a worker
 * thread of its own under a watchdog that ends a runaway worker (the world comes back on its
 * next request).
 */
export async function openLocalWorld(options: LocalWorldOptions): Promise<LocalWorldHandle> {
  mkdirSync(stateDir(options.dir), { recursive: true });
  if (options.thread !== 'worker') {
    const { runner, files } = await openRunnerWithFiles(options);
    return {
      name: options.world,
      code: runner.code,
      handle: (request) => {
        // An edit of a colocated file is in force on the next request.
        const reading = files?.beforeRequest();
        return reading === undefined ? runner.handle(request) : reading.then(() => runner.handle(request));
      },
      streamCall: (call: StreamCall) => runner.streamCall(call),
      replaceTwin: (bundle) => runner.replaceTwin(bundle),
      twinBuildFailed: (vendor, problem) => runner.twinBuildFailed(vendor, problem),
      async close() {
        files?.close();
        await runner.close();
        await runner.storage.close();
      },
    };
  }
  if (options.colocate !== undefined || options.report !== undefined) throw new TypeError("a world file's colocated files are served by a world in this thread (thread: 'main')");
  const worker = new SupervisedWorker<WorkerCall, WorkerReply>({
    script: compiledScript(import.meta.url, './worker-main.js'),
    workerData: options,
    callTimeoutMs: options.callTimeoutMs ?? 5000,
    name: `world ${options.org}/${options.world}`,
  });
  const code = worldCode(options.twins);
  // The first call starts the worker, which opens the storage and loads the twins. When that
  // fails (a store another process serves, a damaged one), the worker goes too: it would keep
  // the process alive after the caller reported the failure.
  let probe: ReturnType<typeof responseFromWire>;
  try {
    probe = responseFromWire(
      (await worker.call(requestToWire({ surface: 'api', method: 'GET', path: '/clock', query: '', headers: {}, scope: 'read', requestId: 'start', receivedAt: Date.now() }))) as ResponseWire,
    );
  } catch (e) {
    await worker.close();
    throw e;
  }
  if (probe.status !== 200) {
    await worker.close();
    throw new Error(`the world did not start: ${String(probe.body)}`);
  }
  return {
    name: options.world,
    code,
    // A world ended by the watchdog answers this request with handler_timeout (or
    // sandbox_crashed for the others in flight), and starts again on the next one.
    handle: (request) =>
      (worker.call(requestToWire(request), request.body ? [request.body.buffer as ArrayBuffer] : undefined) as Promise<ResponseWire>).then(responseFromWire, errorResponse),
    // A stream call's failure (KitError, e.g. handler_timeout) rejects: the host closes that connection.
    streamCall: (call: StreamCall) => worker.call({ kind: 'stream', call }) as Promise<StreamResult>,
    async close() {
      await worker.call({ kind: 'close' });
      await worker.close();
    },
  };
}
