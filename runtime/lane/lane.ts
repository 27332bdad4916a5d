/**
 * A lane for code the host does not trust: one `WorldSandbox` in a worker thread of its own, and
 * a watchdog that ends the worker when a call outlives its wall limit by more than a grace.
 *
 * QuickJS's interrupts stop a guest's loops, but not work inside one native call, and a loop of
 * native-heavy calls (`for (;;) Array(1e6).fill(0)`) polls so rarely that it ran 45 s in the
 * server's thread against a 2.5 s limit. In a worker, nothing the guest does stops the caller's
 * thread, and `terminate()` stops the wasm wherever it is. The lane starts a new worker on its
 * next operation and loads into it again every script that was loaded, so its owner sees one
 * failed call (`timeout`), never a dead sandbox.
 *
 * Operations run one at a time, in order. A guest's host call is answered by this thread between
 * its other work (the worker waits on a SharedArrayBuffer), so reads see the owner's live state.
 */
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { DEFAULT_CALL_MS, loadSandboxModule, type CallResult, type HostCall, type LoadOptions, type SandboxLimits } from '../sandbox/index.js';
import { compiledScript } from '../worker/index.js';
import type { HostReply, LaneOp, LaneReply, LaneWorkerData } from './protocol.js';
import type { LaneOptions, UntrustedLane } from './types.js';
import type { ComponentCode } from '../component/types.js';

export type { LaneOptions } from './types.js';

/** The worker's stack: deep enough for the sandbox's 512 KiB QuickJS stack (runtime/sandbox/README.md). */
const WORKER_STACK_MB = 24;
/** The worker's own V8 heap holds only what crosses (inputs, answers, scripts); QuickJS's memory is a wasm memory beside it. */
const WORKER_HEAP_MB = 256;

interface Job {
  op: LaneOp;
  hostCall: HostCall | undefined;
  resolve(reply: LaneReply['result']): void;
}

interface Running {
  worker: Worker;
  hostPort: MessagePort;
  signal: Int32Array;
}

export class SandboxLane implements UntrustedLane {
  readonly name: string;
  readonly #limits: Partial<SandboxLimits>;
  readonly #callMs: number;
  readonly #graceMs: number;
  readonly #startupMs: number;
  /** What was loaded and not unloaded, in order: loaded again into every new worker. */
  readonly #loaded = new Map<string, { source: string; options: LoadOptions } | { component: ComponentCode }>();
  readonly #queue: Job[] = [];
  #running: Running | undefined;
  #pumping = false;
  #closed = false;
  #spawned = 0;
  /** The operation in flight: its host function, and how to settle it. */
  #current: { hostCall: HostCall | undefined; settle(reply: LaneReply | null, failure?: CallResult): void } | undefined;

  constructor(options: LaneOptions) {
    this.name = options.name;
    this.#limits = { ...options.limits };
    this.#callMs = options.limits?.callMs ?? DEFAULT_CALL_MS;
    this.#graceMs = options.graceMs ?? Math.max(100, Math.ceil(this.#callMs / 10));
    this.#startupMs = options.startupMs ?? 30_000;
    if (!Number.isFinite(this.#graceMs) || this.#graceMs < 0) throw new TypeError('SandboxLane: graceMs must be a non-negative number');
  }

  /** How many workers were started to replace one that was ended or died. */
  get restarts(): number {
    return Math.max(0, this.#spawned - 1);
  }

  /** The longest an operation can hold the lane: its wall limit and the grace. */
  get limitMs(): number {
    return this.#callMs + this.#graceMs;
  }

  /** Loads `source` as context `name` (see `WorldSandbox.load`); kept for every later worker once it loads. */
  async load(name: string, source: string, options: LoadOptions = {}): Promise<CallResult> {
    const result = (await this.#enqueue({ kind: 'load', name, source, options }, undefined)) as CallResult;
    if ('ok' in result) this.#loaded.set(name, { source, options });
    else this.#loaded.delete(name);
    return result;
  }

  /** Loads a component twin as context `name` (runtime/component/instance.ts), in the worker beside the sandbox; kept for every later worker once it loads. */
  async loadComponent(name: string, code: ComponentCode): Promise<CallResult> {
    const result = (await this.#enqueue({ kind: 'load-component', name, code }, undefined)) as CallResult;
    if ('ok' in result) this.#loaded.set(name, { component: code });
    else this.#loaded.delete(name);
    return result;
  }

  /** Calls `fn` of context `name` (see `WorldSandbox.call`); `hostCall` answers the guest's host calls. */
  call(name: string, fn: string, input: string, hostCall?: HostCall): Promise<CallResult> {
    return this.#enqueue({ kind: 'call', name, fn, input, host: hostCall !== undefined }, hostCall) as Promise<CallResult>;
  }

  /** Drops context `name`. */
  async unload(name: string): Promise<void> {
    this.#loaded.delete(name);
    if (this.#running !== undefined || this.#queue.length > 0) await this.#enqueue({ kind: 'unload', name }, undefined);
  }

  /** What the context's own runtime holds (see `WorldSandbox.memoryUsed`). */
  async memoryUsed(name: string): Promise<number | null> {
    const r = await this.#enqueue({ kind: 'memory', name }, undefined);
    return 'memory' in r ? r.memory : null;
  }

  /** Ends the worker; operations waiting answer `disposed`. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) job.resolve(disposed(`${this.name}: the lane is closed`));
    this.#current?.settle(null, disposed(`${this.name}: the lane is closed`));
    if (this.#running !== undefined) await this.#end(this.#running);
  }

  #enqueue(op: LaneOp, hostCall: HostCall | undefined): Promise<LaneReply['result']> {
    if (this.#closed) return Promise.resolve(disposed(`${this.name}: the lane is closed`));
    return new Promise((resolve) => {
      this.#queue.push({ op, hostCall, resolve });
      void this.#pump();
    });
  }

  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      for (let job = this.#queue.shift(); job !== undefined; job = this.#queue.shift()) {
        if (this.#running === undefined) {
          const failure = await this.#start();
          if (failure !== null) {
            job.resolve(failure);
            continue;
          }
        }
        job.resolve(await this.#perform(job.op, job.hostCall));
      }
    } finally {
      this.#pumping = false;
    }
  }

  /**
   * Starts a worker and loads into it what was loaded before. A script that no longer loads (it
   * ran out of time, say, on a busier machine) is dropped and reported, and the rest go on.
   */
  async #start(): Promise<CallResult | null> {
    const wasm = (await loadSandboxModule()).wasm;
    for (;;) {
      if (this.#closed) return disposed(`${this.name}: the lane is closed`);
      const started = await this.#spawn(wasm);
      if (started !== null) return started;
      let complete = true;
      for (const [name, loaded] of [...this.#loaded]) {
        const op: LaneOp = 'component' in loaded ? { kind: 'load-component', name, code: loaded.component } : { kind: 'load', name, source: loaded.source, options: loaded.options };
        const r = (await this.#perform(op, undefined)) as CallResult;
        if ('error' in r) {
          console.error(`twinkit: ${this.name}: '${name}' no longer loads after the sandbox restarted and is dropped: ${r.error.message}`);
          this.#loaded.delete(name);
        }
        if (this.#running === undefined) {
          complete = false;
          break;
        }
      }
      if (complete) return null;
    }
  }

  /** A new worker, serving once it says so; a failure to start is the answer of the operation waiting. */
  #spawn(wasm: WebAssembly.Module): Promise<CallResult | null> {
    const { port1, port2 } = new MessageChannel();
    const signal = new Int32Array(new SharedArrayBuffer(4));
    const workerData: LaneWorkerData = { wasm, limits: this.#limits, hostPort: port2, signal };
    const worker = new Worker(compiledScript(import.meta.url, './lane-worker.js'), {
      workerData,
      transferList: [port2],
      name: this.name,
      resourceLimits: { stackSizeMb: WORKER_STACK_MB, maxOldGenerationSizeMb: WORKER_HEAP_MB },
    });
    this.#spawned++;
    const running: Running = { worker, hostPort: port1, signal };
    this.#running = running;
    worker.unref();
    port1.unref();
    port1.on('message', ([op, arg]: [string, string]) => this.#answerHost(running, op, arg));
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        void this.#end(running);
        resolve(disposed(`${this.name}: the sandbox did not start within ${this.#startupMs} ms`));
      }, this.#startupMs);
      const gone = (why: string): void => {
        clearTimeout(timer);
        if (this.#running === running) void this.#end(running);
        this.#current?.settle(null, disposed(`${this.name}: ${why}`));
        resolve(disposed(`${this.name}: ${why}`));
      };
      worker.once('message', (m: unknown) => {
        clearTimeout(timer);
        if (m === 'ready') {
          worker.on('message', (reply: LaneReply) => {
            if (this.#running === running) this.#current?.settle(reply);
          });
          resolve(null);
        } else gone('the sandbox sent something else than ready');
      });
      worker.on('error', (e: Error) => {
        if (this.#running === running) gone(`the sandbox's thread failed: ${e.message}`);
      });
      worker.on('exit', (code: number) => {
        if (this.#running === running) gone(`the sandbox's thread exited with code ${code}`);
      });
    });
  }

  /** Sends one operation and waits for its reply, or for the watchdog. */
  #perform(op: LaneOp, hostCall: HostCall | undefined): Promise<LaneReply['result']> {
    const running = this.#running;
    if (running === undefined) return Promise.resolve(disposed(`${this.name}: the sandbox is not running`));
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        void this.#end(running);
        const what = op.kind === 'load' || op.kind === 'load-component' ? `loading '${op.name}'` : op.kind === 'call' ? `the call of ${op.fn} in '${op.name}'` : op.kind;
        settle(null, {
          error: {
            code: 'timeout',
            message: `${what} exceeded its time limit of ${this.#callMs} ms (it was stopped ${this.#graceMs} ms later, inside native work; the sandbox starts again on the next call)`,
          },
        });
      }, this.limitMs);
      const settle = (reply: LaneReply | null, failure?: CallResult): void => {
        if (this.#current?.settle !== settle) return;
        this.#current = undefined;
        clearTimeout(timer);
        if (reply === null) {
          resolve(failure ?? disposed(`${this.name}: the sandbox ended`));
          return;
        }
        // A sandbox that ended itself (memory past its cap, a trap) is replaced on the next operation.
        if (!reply.alive) void this.#end(running);
        resolve(reply.result);
      };
      this.#current = { hostCall, settle };
      running.worker.postMessage(op);
    });
  }

  /** A guest's host call, answered at once; the worker waits on the signal. */
  #answerHost(running: Running, op: string, arg: string): void {
    if (this.#running !== running) return;
    const host = this.#current?.hostCall;
    let reply: HostReply;
    if (host === undefined) reply = [1, 'no host function is offered during this call', null];
    else {
      try {
        const out = host(op, arg);
        reply = typeof out === 'string' ? [0, out] : [1, `host answered ${op} with a ${typeof out}, not a string`, null];
      } catch (e) {
        const code = (e as { code?: unknown } | null)?.code;
        reply = [1, e instanceof Error ? e.message : String(e), typeof code === 'string' ? code : null];
      }
    }
    running.hostPort.postMessage(reply);
    Atomics.store(running.signal, 0, 1);
    Atomics.notify(running.signal, 0);
  }

  /** Ends a worker (if it is the current one, the next operation starts another); resolves once it is gone. */
  #end(running: Running): Promise<void> {
    if (this.#running === running) this.#running = undefined;
    running.hostPort.close();
    return running.worker.terminate().then(
      () => undefined,
      () => undefined,
    );
  }
}

function disposed(message: string): CallResult {
  return { error: { code: 'disposed', message } };
}
