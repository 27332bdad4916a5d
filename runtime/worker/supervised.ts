/**
 * A worker thread under a watchdog. Interpreter interrupts cannot stop everything a guest may do
 * (a loop of native-heavy calls such as `Array(1e5).fill(0)` runs for seconds between two
 * interrupt checks), so a world runs in a worker thread that the main thread can end. The main
 * thread and every other world keep serving; the ended world comes back, in a new worker, on
 * its next call.
 *
 * The watchdog measures progress, not each call's age: it fires when calls are in flight and
 * the worker has answered none of them for `callTimeoutMs`. A handler that serves one call at a
 * time (a QuickJS sandbox does) thus gives every call its full time once it starts, however
 * many wait behind it, and the call that was running when it fired is the oldest in flight.
 */
import { Worker } from 'node:worker_threads';
import type { ResourceLimits, TransferListItem } from 'node:worker_threads';
import { KitError } from '../errors.js';
import { TurnBatcher } from './batch.js';
import type { CallMessage, ReplyBatch, ReplyMessage } from './protocol.js';
import { fromErrorBody } from './protocol.js';

export interface SupervisedWorkerOptions {
  /** The worker's module; it calls `serveInWorker(handler)`. */
  script: URL;
  /** Handed to every worker started, as `workerData`. */
  workerData: unknown;
  /** Watchdog: how long the worker may go without answering while calls are in flight. Default 5000. */
  callTimeoutMs?: number;
  /** Names the worker thread, and the errors. */
  name: string;
  /**
   * Limits of each worker thread. Default `{ stackSizeMb: 24 }`: deep enough for the sandbox's
   * 512 KiB QuickJS stack (see runtime/sandbox/README.md).
   */
  resourceLimits?: ResourceLimits;
  /** How long a new worker may take to start serving. Default 30 000. */
  startupTimeoutMs?: number;
}

export const DEFAULT_CALL_TIMEOUT_MS = 5000;
export const DEFAULT_WORKER_STACK_MB = 24;
const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export class SupervisedWorker<Req, Res> {
  readonly name: string;
  readonly #options: SupervisedWorkerOptions;
  readonly #callTimeoutMs: number;
  readonly #startupTimeoutMs: number;
  #worker: Worker | undefined;
  #ready = false;
  /** In submission order (Map keeps insertion order), so the first is the oldest. */
  readonly #inflight = new Map<number, Pending>();
  #nextId = 1;
  #timer: NodeJS.Timeout | undefined;
  #timerMs = 0;
  #spawned = 0;
  #closed = false;
  readonly #ending = new Set<Promise<unknown>>();
  /** Calls made this turn, sent together; one that cannot be cloned fails alone. */
  readonly #outbox = new TurnBatcher<CallMessage>(
    () => this.#worker,
    ([id], e) => this.#settle(id, (pending) => pending.reject(e)),
  );

  constructor(options: SupervisedWorkerOptions) {
    const callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    const startupTimeoutMs = options.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS;
    if (!(options.script instanceof URL)) throw new TypeError('SupervisedWorker: script must be a URL');
    if (!Number.isFinite(callTimeoutMs) || callTimeoutMs <= 0) throw new TypeError('SupervisedWorker: callTimeoutMs must be a positive number');
    if (!Number.isFinite(startupTimeoutMs) || startupTimeoutMs <= 0) throw new TypeError('SupervisedWorker: startupTimeoutMs must be a positive number');
    this.#options = options;
    this.name = options.name;
    this.#callTimeoutMs = callTimeoutMs;
    this.#startupTimeoutMs = startupTimeoutMs;
  }

  /** How many times a worker was started to replace one that was ended or died. */
  get restarts(): number {
    return Math.max(0, this.#spawned - 1);
  }

  /** Calls in flight (sent, not yet answered). */
  get pending(): number {
    return this.#inflight.size;
  }

  /**
   * Sends one call. Rejects with KitError `handler_timeout` when the watchdog ended the worker
   * while this call was running, `sandbox_crashed` when the worker died or was ended with this
   * call waiting, or the handler's own error (a KitError keeps its code; anything else is
   * `internal`).
   */
  call(request: Req, transfer?: readonly TransferListItem[]): Promise<Res> {
    if (this.#closed) return Promise.reject(new TypeError(`SupervisedWorker ${this.name} is closed`));
    if (this.#worker === undefined) this.#spawn();
    const id = this.#nextId++;
    return new Promise<Res>((resolve, reject) => {
      this.#inflight.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.#outbox.push([id, request], transfer);
      if (this.#ready && this.#inflight.size === 1) this.#arm(this.#callTimeoutMs);
    });
  }

  /** Ends the worker; calls in flight reject with `sandbox_crashed`. Later calls throw. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#end(() => new KitError('sandbox_crashed', `${this.name}: closed`));
    await Promise.all([...this.#ending]);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #spawn(): Worker {
    const worker = new Worker(this.#options.script, {
      workerData: this.#options.workerData,
      name: this.name,
      resourceLimits: this.#options.resourceLimits ?? { stackSizeMb: DEFAULT_WORKER_STACK_MB },
    });
    this.#spawned++;
    this.#worker = worker;
    this.#ready = false;
    // An idle world must not keep the process alive; while calls are in flight the watchdog
    // timer does.
    worker.unref();
    worker.on('message', (batch: ReplyBatch) => {
      if (worker !== this.#worker) return;
      if (batch[0] === 'ready') this.#onReady();
      else for (const reply of batch as ReplyMessage[]) this.#onReply(reply);
    });
    worker.on('error', (e: Error) => {
      if (worker !== this.#worker) return;
      this.#end(() => new KitError('sandbox_crashed', `${this.name}: the worker failed: ${e.message}`));
    });
    worker.on('messageerror', (e: Error) => {
      if (worker !== this.#worker) return;
      this.#end(() => new KitError('sandbox_crashed', `${this.name}: a reply could not be read: ${e.message}`));
    });
    worker.on('exit', (code: number) => {
      if (worker !== this.#worker) return;
      this.#end(() => new KitError('sandbox_crashed', `${this.name}: the worker exited with code ${code}`));
    });
    this.#arm(this.#startupTimeoutMs);
    return worker;
  }

  #onReady(): void {
    this.#ready = true;
    if (this.#inflight.size > 0) this.#arm(this.#callTimeoutMs);
    else this.#disarm();
  }

  #onReply(message: ReplyMessage): void {
    if (message[1] === 0) this.#settle(message[0], (pending) => pending.resolve(message[2]));
    else this.#settle(message[0], (pending) => pending.reject(fromErrorBody(message[2])));
  }

  /** Takes call `id` out of flight (an answer is progress: the watchdog starts over). */
  #settle(id: number, how: (pending: Pending) => void): void {
    const pending = this.#inflight.get(id);
    if (pending === undefined) return;
    this.#inflight.delete(id);
    if (this.#inflight.size > 0) this.#arm(this.#callTimeoutMs);
    else this.#disarm();
    how(pending);
  }

  #arm(ms: number): void {
    if (this.#timer !== undefined && this.#timerMs === ms) {
      this.#timer.refresh();
      return;
    }
    this.#disarm();
    this.#timerMs = ms;
    this.#timer = setTimeout(() => this.#fire(), ms);
  }

  #disarm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #fire(): void {
    this.#timer = undefined;
    if (!this.#ready) {
      this.#end(() => new KitError('sandbox_crashed', `${this.name}: the worker did not start within ${this.#startupTimeoutMs} ms`));
      return;
    }
    let first = true;
    this.#end(() => {
      if (first) {
        first = false;
        return new KitError('handler_timeout', `${this.name}: the call ran past ${this.#callTimeoutMs} ms; its world was ended and starts again on its next call`);
      }
      return new KitError('sandbox_crashed', `${this.name}: the world was ended while this call waited behind one that ran past ${this.#callTimeoutMs} ms`);
    });
  }

  /** Ends the current worker (if any) and rejects every call in flight, oldest first. */
  #end(errorFor: () => KitError): void {
    this.#disarm();
    const worker = this.#worker;
    this.#worker = undefined;
    this.#ready = false;
    if (worker !== undefined) {
      const ending = worker.terminate().catch(() => undefined);
      this.#ending.add(ending);
      void ending.finally(() => this.#ending.delete(ending));
    }
    const calls = [...this.#inflight.values()];
    this.#inflight.clear();
    this.#outbox.clear();
    for (const pending of calls) pending.reject(errorFor());
  }
}
