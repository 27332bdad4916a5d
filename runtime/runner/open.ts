/**
 * Opening a world to serve: in this thread (tests, and inside a world's worker), or in a
 * worker thread of its own under a watchdog (`openLocalWorld`, what servers use).
 */
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxLimits } from '../sandbox/index.js';
import { openLmdbStorage, type Storage } from '../store/index.js';
import { WorldStore } from '../world/index.js';
import { compiledScript, SupervisedWorker } from '../worker/index.js';
import { KIT_VERSION } from '../version.js';
import { errorResponse } from './answers.js';
import { WorldRunner, type RunnerOptions } from './world-runner.js';
import { requestToWire, responseFromWire, type RequestWire, type ResponseWire } from './wire.js';
import type { LocalWorldOptions, StreamCall, StreamResult, TwinBundle, WorldHandle } from './types.js';

export interface WorldRunnerOptions {
  storage: Storage;
  /** The world's name in the storage; made with the twins when it does not exist yet. */
  world: string;
  twins: TwinBundle[];
  /** Run trusted (built-in) twins in V8; false runs every twin in QuickJS (default true). */
  trustTwins?: boolean;
  guestRuntime?: string;
  branches?: boolean;
  scenarioDir?: string;
  limits?: Partial<SandboxLimits>;
  /** The engine's wall clock (tests freeze it). */
  now?: () => number;
  /** Outbound webhook settings (tests shorten the retry delays). */
  webhooks?: RunnerOptions['webhooks'];
}

/** The code version a world runs: the runtime's version and a hash of its twins' code. */
export function worldCode(twins: TwinBundle[]): string {
  const hash = createHash('sha256');
  for (const t of [...twins].sort((a, b) => (a.vendor < b.vendor ? -1 : 1))) hash.update(t.vendor).update('\0').update(t.source).update('\0');
  return `${KIT_VERSION}+${hash.digest('hex').slice(0, 12)}`;
}

/** A world served in this thread (its untrusted code in its sandbox lane). */
export async function openWorldRunner(options: WorldRunnerOptions): Promise<WorldRunner> {
  const store = new WorldStore(options.storage, options.now ? { now: options.now } : {});
  const vendors = options.twins.map((t) => t.vendor);
  const world = store.hasWorld(options.world) ? store.openWorld(options.world) : store.createWorld(options.world, { twins: vendors });
  const runnerOptions: RunnerOptions = {
    world,
    storage: options.storage,
    twins: options.twins,
    code: worldCode(options.twins),
    branches: options.branches ?? false,
  };
  if (options.limits !== undefined) runnerOptions.limits = options.limits;
  if (options.guestRuntime !== undefined) runnerOptions.guestRuntime = options.guestRuntime;
  if (options.trustTwins !== undefined) runnerOptions.trustTwins = options.trustTwins;
  if (options.scenarioDir !== undefined) runnerOptions.scenarioDir = options.scenarioDir;
  if (options.now) runnerOptions.wallNow = options.now;
  if (options.webhooks) runnerOptions.webhooks = options.webhooks;
  return WorldRunner.open(runnerOptions);
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
export function openLocalRunner(options: LocalWorldOptions): Promise<WorldRunner> {
  const storage = openLmdbStorage(stateDir(options.dir));
  const opened: WorldRunnerOptions = { storage, world: options.world, twins: options.twins, scenarioDir: join(options.dir, '.kit', 'scenarios') };
  if (options.guestRuntime !== undefined) opened.guestRuntime = options.guestRuntime;
  return openWorldRunner(opened);
}

/**
 * A world served from a directory: by default in this thread, its untrusted code in its sandbox
 * lanes (worker threads under a watchdog); with `thread: 'worker'`, the whole world in a worker
 * thread of its own under a watchdog that ends a runaway worker (the world comes back on its
 * next request).
 */
export async function openLocalWorld(options: LocalWorldOptions): Promise<WorldHandle> {
  mkdirSync(stateDir(options.dir), { recursive: true });
  if (options.thread !== 'worker') {
    const runner = await openLocalRunner(options);
    return {
      name: options.world,
      code: runner.code,
      handle: (request) => runner.handle(request),
      streamCall: (call: StreamCall) => runner.streamCall(call),
      async close() {
        await runner.close();
        await runner.storage.close();
      },
    };
  }
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
