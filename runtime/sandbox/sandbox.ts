/**
 * One world's sandbox: one WebAssembly instance with its own capped memory, one QuickJS runtime,
 * one context per loaded script. Generic: it knows nothing of twins, HTTP or storage. Data
 * crosses as one string in and one string out per call; the guest may reach the host through one
 * function, `__host_call(op, argJson) → string`.
 *
 * Every failure is returned as a value (`CallResult`), never thrown. A failure that leaves the
 * instance unusable (a wasm trap, an Emscripten abort, the host's own stack overflowing under a
 * deep guest recursion) ends this sandbox: `alive` turns false, later calls answer `disposed`,
 * and the owner creates a fresh one.
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten-core';
import { instantiateWorld, MIN_MEMORY_BYTES, WASM_PAGE } from './wasm.js';
import type { SandboxModule, WasmWorld } from './wasm.js';
import { PRELUDE_SOURCE } from './prelude.js';

export interface SandboxLimits {
  /** Cap of the world's `WebAssembly.Memory` (whole 64 KiB pages; at least 24 MiB). Default 64 MiB. */
  memoryBytes: number;
  /**
   * QuickJS stack limit. Default: the thread's native stack / 36, from 64 KiB to 512 KiB
   * (512 KiB in a SupervisedWorker's thread, 64 KiB on a main thread; see `defaultStackBytes`).
   */
  stackBytes: number;
  /**
   * Interrupt budget per call (and per load), counted in invocations of QuickJS's interrupt
   * handler, which QuickJS makes about every 10 000 interpreter branches and calls: work, not
   * wall time. Default 8 000: about a second of `for (;;) i++` on this machine when it is
   * quiet (two when it is busy), less for an empty loop, far more for a loop that allocates on
   * every turn (see README.md); the worker watchdog bounds the rest.
   */
  callSteps: number;
  /**
   * Wall time per call (and per load), in ms, checked at the same interrupts. Steps count the
   * interpreter's work, not a builtin's: `for (;;) Array(20).fill(0).sort()` polls rarely per
   * second of work and ran into the worker's 5 s watchdog, which ends the world. Default 2 500.
   */
  callMs: number;
}

export type SandboxErrorCode = 'guest_error' | 'timeout' | 'out_of_memory' | 'stack_overflow' | 'load_error' | 'disposed';
/**
 * A call's answer: its text, or an error. From `callValue`, a guest may answer its writes,
 * events and response (with its body's JSON text) as values beside the text (the guest runtime
 * does where `__host_copy` is offered).
 */
export type CallResult = { ok: string; writes?: unknown; events?: unknown; response?: unknown; body?: unknown } | { error: { code: SandboxErrorCode; message: string } };
/** The one host function offered to guests. Its return must be a string; a throw becomes a guest exception. */
export type HostCall = (op: string, argJson: string) => string;

/**
 * Work on bytes the host does natively (hashing, compression: `nodeHostBytes` in
 * host-bytes-node.ts), offered to a context loaded with `hostCall` as
 * `__host_bytes(op, arg, ...inputs)`. It is the engine's, not a call's: it reads nothing of a
 * world. It answers bytes, or bytes and a number (`[bytes, n]`); a throw becomes a guest
 * exception (`HostError`, with a KitError's `code`). Inputs are views the host must not keep.
 */
export type HostBytes = (op: string, arg: number, inputs: Uint8Array[]) => Uint8Array | [Uint8Array, number];

/** A host function that answers values instead of JSON text, for engines that share a heap with the host. */
export type HostValue = (op: string, arg: Record<string, unknown>) => unknown;

/** What the runner needs of an engine that runs guest scripts: `WorldSandbox` (QuickJS) or `TrustedContexts` (V8). */
export interface GuestEngine {
  readonly alive: boolean;
  load(name: string, source: string, options?: LoadOptions): CallResult;
  call(name: string, fn: string, input: string, hostCall?: HostCall): CallResult;
  /**
   * Only engines whose guests share the host's heap: `fn` gets `input` itself rather than its
   * JSON, and the context offers `__host_value(op, arg)` beside `__host_call` during the call.
   */
  callValue?(name: string, fn: string, input: object, hostCall: HostCall, hostValue: HostValue): CallResult;
  unload(name: string): void;
  dispose(): void;
}

export const DEFAULT_MEMORY_BYTES = 64 * 1024 * 1024;
export const DEFAULT_CALL_STEPS = 8_000;
export const DEFAULT_CALL_MS = 2_500;
const MAX_STACK_BYTES = 512 * 1024;
/**
 * The floor of the default. On a main thread (984 KiB of native stack) the clean fit would be
 * 24 KiB, about 27 frames of a function with a few arguments and locals, too few for real
 * code; 64 KiB gives about 70 such frames (360 bare ones) and keeps ordinary recursion, getters,
 * Proxy traps and JSON.stringify clean. Only the parser on pathological nesting then outruns the
 * native stack first, which ends that world (see `#crashed`), never the host.
 */
const MIN_DEFAULT_STACK_BYTES = 64 * 1024;
/**
 * How much native (V8) stack QuickJS's wasm frames can use per byte of QuickJS stack. Measured
 * here (native stack / QuickJS limit that overflowed V8 first, and that did not): the parser on
 * nested brackets (`eval('['.repeat(1e5) …)`) 21× / 32×, JSON.stringify of a deep object
 * 11× / 15×, plain recursion 1.9× / 2.6×. 36 leaves a margin above the worst.
 */
const NATIVE_STACK_RATIO = 36;
/** Static data and the 5 MB C stack of the glue sit below the malloc heap. */
const FIXED_WASM_BYTES = 6 * 1024 * 1024;
/**
 * Strings that cannot cross as NUL-terminated UTF-8 (U+0000, lone surrogates) or that start
 * with the U+0001 mark of an encoded string (see prelude.ts).
 */
function unsafe(s: string): boolean {
  // Native checks, not a regular expression: measured here, the expression (with its
  // look-arounds for lone surrogates) cost 0.44 µs per 1 KB and 3.3 µs per 10 KB of every
  // call's input and every host answer; these cost 0.02 and 0.05 µs.
  return s.charCodeAt(0) === 1 || s.indexOf('\0') !== -1 || !(s as unknown as { isWellFormed(): boolean }).isWellFormed();
}
/** Messages from guests are cut to this many characters. */
const MAX_MESSAGE_CHARS = 4096;

/** V8's native stack on a main thread (its default `--stack-size`). */
const DEFAULT_NATIVE_STACK_BYTES = 984 * 1024;

/**
 * The QuickJS stack a thread can afford: QuickJS checks only its own stack, so the native stack
 * must outlast it, or a deep recursion overflows the host's stack first (which ends the sandbox).
 * `nativeBytes`: the thread's native stack (a sandbox module made on Node knows its thread's; see
 * wasm-node.ts), else V8's main-thread default.
 */
export function defaultStackBytes(nativeBytes = DEFAULT_NATIVE_STACK_BYTES): number {
  const fit = Math.floor(nativeBytes / NATIVE_STACK_RATIO / 4096) * 4096;
  return Math.max(MIN_DEFAULT_STACK_BYTES, Math.min(MAX_STACK_BYTES, fit));
}

interface LoadedContext {
  ctx: QuickJSContext;
  invoke: QuickJSHandle;
  describe: QuickJSHandle;
  /** The QuickJS runtime the context lives in: the sandbox's own, or one of its own (`LoadOptions.memoryBytes`). */
  runtime: QuickJSRuntime;
  /** The runtime's own memory limit, when it has one. */
  memoryBytes?: number;
}

export interface LoadOptions {
  /** Offer `__host_call` to the script (served by the `HostCall` of each call). */
  hostCall?: boolean;
  /**
   * Give the context a QuickJS runtime of its own, limited to this many bytes, inside the same
   * instance: what it holds counts against its own limit, not the sandbox's shared one (a
   * world's checks: one that keeps 30 MB does not leave the next none).
   */
  memoryBytes?: number;
}

type CallFailure = { error: { code: SandboxErrorCode; message: string } };

let live = 0;
let disposeFailures = 0;
/** For tests: sandboxes not yet disposed, and disposals where QuickJS reported leaked handles. */
export function sandboxStats(): { live: number; disposeFailures: number } {
  return { live, disposeFailures };
}

export class WorldSandbox implements GuestEngine {
  readonly limits: Readonly<SandboxLimits>;
  #world: WasmWorld | undefined;
  #runtime: QuickJSRuntime | undefined;
  readonly #contexts = new Map<string, LoadedContext>();
  #steps = 0;
  #budget = 0;
  /** `performance.now()` past which the running call is interrupted. */
  #deadline = 0;
  #interrupted = false;
  /** The interrupt was the wall-time limit, not the step budget. */
  #overTime = false;
  #running = false;
  #disposeAfterCall = false;
  #hostCall: HostCall | undefined;
  #aborted: string | undefined;
  /** The wasm memory hit its cap during the current call or load. */
  #growFailed = false;
  /**
   * Memory ran out at least once. QuickJS can lose track of objects on some out-of-memory
   * paths (measured: a promise chain that ran out inside its jobs), and its runtime free then
   * asserts; such a world is dropped whole instead of freed piece by piece.
   */
  #tainted = false;
  #lastWasmBytes = 0;
  readonly #hostBytes: HostBytes | undefined;

  private constructor(module: SandboxModule, limits: SandboxLimits, hostBytes: HostBytes | undefined) {
    this.limits = Object.freeze({ ...limits });
    this.#hostBytes = hostBytes;
    const world = instantiateWorld(module, limits.memoryBytes, {
      onAbort: (reason) => {
        this.#aborted = reason;
      },
      onGrowFailed: () => {
        this.#growFailed = true;
        this.#tainted = true;
      },
    });
    this.#world = world;
    this.#runtime = this.#newRuntime(runtimeMemoryLimit(limits.memoryBytes));
    live++;
  }

  /** A QuickJS runtime in this instance, under this sandbox's stack limit, step budget and deadline. */
  #newRuntime(memoryLimit: number): QuickJSRuntime {
    const runtime = (this.#world as WasmWorld).quickjs.newRuntime();
    runtime.setMemoryLimit(memoryLimit);
    runtime.setMaxStackSize(this.limits.stackBytes);
    runtime.setInterruptHandler(() => {
      this.#steps++;
      if (this.#steps > this.#budget) {
        this.#interrupted = true;
        return true;
      }
      if (performance.now() > this.#deadline) {
        this.#interrupted = true;
        this.#overTime = true;
        return true;
      }
      return false;
    });
    return runtime;
  }

  /**
   * Instantiates a new world sandbox from the process's compiled module. Synchronous.
   * `hostBytes`: offered to contexts loaded with `hostCall` as `__host_bytes`.
   */
  static create(module: SandboxModule, limits?: Partial<SandboxLimits>, hostBytes?: HostBytes): WorldSandbox {
    return new WorldSandbox(module, resolveLimits(limits, module.nativeStackBytes), hostBytes);
  }

  get alive(): boolean {
    return this.#runtime !== undefined;
  }

  /** Evaluates `source` (a bundled script) in a fresh context named `name`; the script defines globals. A context of that name is replaced. */
  load(name: string, source: string, options?: LoadOptions): CallResult {
    if (typeof name !== 'string' || typeof source !== 'string') throw new TypeError('load(name, source): both must be strings');
    const shared = this.#runtime;
    if (shared === undefined) return disposed();
    const own = options?.memoryBytes;
    if (own !== undefined && (!Number.isSafeInteger(own) || own < 256 * 1024)) throw new TypeError(`load: memoryBytes must be an integer of at least 256 KiB, got ${own}`);
    this.#assertNotRunning('load');
    this.unload(name);
    return this.#guarded(() => {
      // A host exception in here (a trap, the host's stack) propagates to #guarded, which ends
      // the whole instance; nothing half-made is freed on a runtime that cannot be trusted.
      const runtime = own === undefined ? shared : this.#newRuntime(own);
      const ctx = runtime.newContext();
      const dropContext = (): void => {
        ctx.dispose();
        if (runtime !== shared) runtime.dispose();
      };
      // One budget and one deadline for the whole load: the prelude, the script and its jobs.
      this.#arm(this.limits.callSteps);
      const prelude = ctx.evalCode(PRELUDE_SOURCE, '<prelude>');
      if (prelude.error) {
        const failure = this.#classify(ctx, undefined, prelude.error, 'load_error', own);
        prelude.error.dispose();
        dropContext();
        return failure;
      }
      const loaded: LoadedContext = { ctx, invoke: ctx.getProp(prelude.value, 'invoke'), describe: ctx.getProp(prelude.value, 'describe'), runtime };
      if (own !== undefined) loaded.memoryBytes = own;
      const installHost = ctx.getProp(prelude.value, 'installHost');
      const installBytes = ctx.getProp(prelude.value, 'installBytes');
      prelude.value.dispose();
      if (options?.hostCall === true) {
        const raw = this.#rawHostCall(ctx);
        const installed = ctx.callFunction(installHost, ctx.undefined, raw);
        raw.dispose();
        if (installed.error) installed.error.dispose();
        else installed.value.dispose();
        if (this.#hostBytes !== undefined) {
          const rawBytes = this.#rawHostBytes(ctx, this.#hostBytes);
          // Sliced: the host reads whole ArrayBuffers, so a view crosses as its own bytes.
          const done = ctx.callFunction(installBytes, ctx.undefined, rawBytes, ctx.true);
          rawBytes.dispose();
          if (done.error) done.error.dispose();
          else done.value.dispose();
        }
      }
      installHost.dispose();
      installBytes.dispose();
      const result = ctx.evalCode(source, name);
      if (result.error) {
        const failure = this.#classify(ctx, loaded.describe, result.error, 'load_error', own);
        result.error.dispose();
        freeContext(loaded);
        return failure;
      }
      result.value.dispose();
      this.#contexts.set(name, loaded);
      return this.#drain(runtime, { ok: '' });
    });
  }

  /**
   * Bytes QuickJS counts as in use by the runtime of context `name`, when it has one of its own
   * (`LoadOptions.memoryBytes`); null otherwise. What a check keeps between its runs.
   */
  memoryUsed(name: string): number | null {
    const loaded = this.#contexts.get(name);
    if (loaded === undefined || loaded.memoryBytes === undefined) return null;
    this.#assertNotRunning('memoryUsed');
    // The dump's "memory used" row: the runtime's malloc count and bytes (quickjs-emscripten
    // offers the same figures only through a private context).
    const row = /^memory used\s+\d+\s+(\d+)/m.exec(loaded.runtime.dumpMemoryUsage());
    return row === null ? null : Number(row[1]);
  }

  /** Calls global function `fn` of context `name` with one string argument; returns its string result. An async function's promise is settled before returning. */
  call(name: string, fn: string, input: string, hostCall?: HostCall): CallResult {
    if (typeof name !== 'string' || typeof fn !== 'string' || typeof input !== 'string') {
      throw new TypeError('call(name, fn, input): all three must be strings');
    }
    if (this.#runtime === undefined) return disposed();
    this.#assertNotRunning('call');
    const loaded = this.#contexts.get(name);
    if (loaded === undefined) return { error: { code: 'load_error', message: `nothing is loaded under the name '${cut(name)}'` } };
    const { ctx, invoke, describe, runtime } = loaded;
    return this.#guarded(() => {
      this.#arm(this.limits.callSteps);
      this.#hostCall = hostCall;
      try {
        const encode = unsafe(input);
        const fnHandle = ctx.newString(fn);
        const arg = ctx.newString(encode ? JSON.stringify(input) : input);
        const flag = encode ? ctx.newNumber(1) : ctx.undefined;
        const result = ctx.callFunction(invoke, ctx.undefined, fnHandle, arg, flag);
        flag.dispose();
        arg.dispose();
        fnHandle.dispose();
        if (result.error) {
          const failure = this.#classify(ctx, describe, result.error, 'guest_error', loaded.memoryBytes);
          result.error.dispose();
          return failure;
        }
        const settled = this.#settle(runtime, loaded, result.value);
        return this.#drain(runtime, settled);
      } finally {
        this.#hostCall = undefined;
      }
    });
  }

  /** Drops the context named `name` (nothing if there is none). */
  unload(name: string): void {
    const loaded = this.#contexts.get(name);
    if (loaded === undefined) return;
    this.#assertNotRunning('unload');
    this.#contexts.delete(name);
    freeContext(loaded);
  }

  /** Frees every context, the runtime and the instance. Idempotent. Called from inside a host call, it takes effect when that call returns. */
  dispose(): void {
    if (this.#runtime === undefined) return;
    if (this.#running) {
      this.#disposeAfterCall = true;
      return;
    }
    const runtime = this.#runtime;
    this.#lastWasmBytes = this.#world?.memory.buffer.byteLength ?? 0;
    this.#runtime = undefined;
    live--;
    // After an abort, a trap or running out of memory, the instance's state cannot be trusted
    // to free itself; dropping the instance and its memory is enough, the garbage collector
    // takes both. A healthy world is freed in order, which checks that no handle leaked.
    const healthy = this.#aborted === undefined && !this.#tainted;
    if (healthy) {
      try {
        for (const loaded of this.#contexts.values()) freeContext(loaded);
        runtime.dispose();
      } catch {
        disposeFailures++;
      }
    }
    this.#contexts.clear();
    this.#world = undefined;
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  /** Bytes of the world's wasm memory (its current size; the last size once disposed). */
  memoryUsage(): { wasmBytes: number } {
    return { wasmBytes: this.#world?.memory.buffer.byteLength ?? this.#lastWasmBytes };
  }

  #arm(steps: number): void {
    this.#steps = 0;
    this.#budget = steps;
    this.#deadline = performance.now() + this.limits.callMs;
    this.#interrupted = false;
    this.#overTime = false;
  }

  /** Why the running call was interrupted, for its `timeout` error. */
  #overBudget(prefix: string): string {
    return this.#overTime ? `${prefix} its time limit of ${this.limits.callMs} ms` : `${prefix} its budget of ${this.limits.callSteps} steps`;
  }

  #assertNotRunning(what: string): void {
    if (this.#running) throw new TypeError(`WorldSandbox.${what}() called from inside a host call`);
  }

  /**
   * Runs `body` with the sandbox marked busy, and turns a host exception escaping the instance
   * (a trap, an abort, the host's stack overflowing) into an error value that ends the sandbox.
   */
  #guarded(body: () => CallResult): CallResult {
    this.#running = true;
    this.#growFailed = false;
    let out: CallResult;
    let thrown: { e: unknown } | undefined;
    try {
      out = body();
    } catch (e) {
      thrown = { e };
      out = disposed();
    } finally {
      this.#running = false;
    }
    if (thrown !== undefined) out = this.#crashed(thrown.e);
    else if (this.#aborted !== undefined && this.alive) out = this.#crashed(new Error(this.#aborted));
    if (this.#disposeAfterCall) {
      this.#disposeAfterCall = false;
      this.dispose();
    }
    return out;
  }

  #crashed(e: unknown): CallFailure {
    const world = this.#world;
    const atCap = this.#growFailed || (world !== undefined && world.memory.buffer.byteLength >= this.limits.memoryBytes * 0.85);
    this.#aborted ??= String(e);
    this.dispose();
    if (e instanceof RangeError && /call stack/i.test(e.message)) {
      return { error: { code: 'stack_overflow', message: 'the host stack overflowed under a deep recursion; the sandbox was ended' } };
    }
    if (atCap) {
      return { error: { code: 'out_of_memory', message: `the world's memory cap (${this.limits.memoryBytes} bytes) was reached; the sandbox was ended` } };
    }
    return { error: { code: 'guest_error', message: `the sandbox crashed and was ended: ${cut(e instanceof Error ? e.message : String(e))}` } };
  }

  /**
   * The microtask checkpoint: jobs the call left queued (a `then` nobody awaited) run before
   * the call answers, inside its budget and with its host function, so that none of a call's
   * work leaks into the next call. Their failures are unhandled rejections, not the call's.
   */
  #drain(runtime: QuickJSRuntime, out: CallResult): CallResult {
    while (this.#runtime !== undefined && !this.#interrupted && runtime.hasPendingJob()) {
      const jobs = runtime.executePendingJobs(1);
      if (jobs.error) jobs.error.dispose();
    }
    if (this.#interrupted) return { error: { code: 'timeout', message: this.#overBudget('call exceeded') } };
    return out;
  }

  /** Waits out a returned promise by running pending jobs (all inside the same budget). */
  #settle(runtime: QuickJSRuntime, loaded: LoadedContext, value: QuickJSHandle): CallResult {
    const { ctx, describe } = loaded;
    let current = value;
    if (ctx.typeof(current) === 'object') {
      let state = ctx.getPromiseState(current);
      // A job that failed (out of memory, stack) may be why the promise never settles.
      let jobFailure: CallFailure | undefined;
      while (state.type === 'pending' && this.#runtime !== undefined && runtime.hasPendingJob()) {
        const jobs = runtime.executePendingJobs(1);
        if (jobs.error) {
          const failure = this.#classify(ctx, describe, jobs.error, 'guest_error', loaded.memoryBytes);
          if (failure.error.code !== 'guest_error') jobFailure = failure;
          jobs.error.dispose();
        }
        state = ctx.getPromiseState(current);
        if (this.#interrupted) break;
      }
      if (state.type === 'pending') {
        current.dispose();
        if (this.#interrupted) return { error: { code: 'timeout', message: this.#overBudget('call exceeded') } };
        if (jobFailure !== undefined) return jobFailure;
        // QuickJS drops a job it has no memory to queue, which strands the promise.
        if (this.#growFailed) return this.#outOfMemory(loaded.memoryBytes);
        return { error: { code: 'guest_error', message: 'the function returned a promise that never settles' } };
      }
      if (state.type === 'rejected') {
        const failure = this.#classify(ctx, describe, state.error, 'guest_error', loaded.memoryBytes);
        state.error.dispose();
        current.dispose();
        return failure;
      }
      if (state.notAPromise !== true) {
        current.dispose();
        current = state.value;
      }
    }
    try {
      return { ok: readString(ctx, current) };
    } catch {
      return { error: { code: 'guest_error', message: 'the function returned a value that did not cross as a string' } };
    } finally {
      current.dispose();
    }
  }

  /** `ownLimit`: the context's own runtime's limit, when it has one. */
  #outOfMemory(ownLimit?: number): CallFailure {
    this.#tainted = true;
    const limit = ownLimit ?? runtimeMemoryLimit(this.limits.memoryBytes);
    return { error: { code: 'out_of_memory', message: `out of memory (the ${ownLimit === undefined ? "runtime's" : "context's own"} limit is ${limit} bytes)` } };
  }

  /** Maps a thrown guest value to an error code; `fallback` is the code of an ordinary exception. */
  #classify(ctx: QuickJSContext, describe: QuickJSHandle | undefined, thrown: QuickJSHandle, fallback: 'guest_error' | 'load_error', ownLimit?: number): CallFailure {
    if (this.#interrupted) {
      return { error: { code: 'timeout', message: this.#overTime ? `exceeded the time limit of ${this.limits.callMs} ms` : `exceeded the budget of ${this.limits.callSteps} steps` } };
    }
    let name = '';
    let message = 'a thrown value that cannot be described';
    if (describe !== undefined) {
      // A little step budget of its own (describing may run guest getters and toString), and
      // what is left of the call's time: the wall limit holds for the call as a whole.
      const deadline = this.#deadline;
      this.#arm(Math.max(10, Math.ceil(this.limits.callSteps / 100)));
      this.#deadline = deadline;
      const described = ctx.callFunction(describe, ctx.undefined, thrown);
      if (described.error) described.error.dispose();
      else {
        try {
          const pair: unknown = ctx.typeof(described.value) === 'string' ? JSON.parse(ctx.getString(described.value)) : undefined;
          if (Array.isArray(pair) && typeof pair[0] === 'string' && typeof pair[1] === 'string') [name, message] = pair;
        } catch {
          // keep the generic message
        }
        described.value.dispose();
      }
      this.#interrupted = false;
    }
    // QuickJS throws null when memory runs out so completely that it cannot even build the
    // InternalError: that is when the wasm memory could not grow during this very call.
    const exhausted = this.#growFailed && ctx.sameValue(thrown, ctx.null);
    if ((name === 'InternalError' && message === 'out of memory') || exhausted) return this.#outOfMemory(ownLimit);
    if (message === 'stack overflow' || (name === 'RangeError' && /call stack/i.test(message))) {
      return { error: { code: 'stack_overflow', message: `stack overflow (the limit is ${this.limits.stackBytes} bytes)` } };
    }
    return { error: { code: fallback, message: cut(name === '' ? message : `${name}: ${message}`) } };
  }

  /** The host side of `__host_call`: `(op, arg, encoded?)`, answering a string (U+0001 + JSON for one that cannot cross as it is). */
  #rawHostCall(ctx: QuickJSContext): QuickJSHandle {
    return ctx.newFunction('__host_raw', (opHandle, argHandle, flagHandle) => {
      const host = this.#hostCall;
      if (host === undefined) return { error: ctx.newError({ name: 'HostError', message: 'no host function is offered during this call' }) };
      if (opHandle === undefined || argHandle === undefined || ctx.typeof(opHandle) !== 'string' || ctx.typeof(argHandle) !== 'string') {
        return { error: ctx.newError({ name: 'TypeError', message: '__host_call(op, argJson) takes two strings' }) };
      }
      let op = ctx.getString(opHandle);
      let arg = ctx.getString(argHandle);
      let out: unknown;
      try {
        if (flagHandle !== undefined && ctx.typeof(flagHandle) === 'number') {
          op = String(JSON.parse(op));
          arg = String(JSON.parse(arg));
        }
        out = host(op, arg);
      } catch (e) {
        const error = ctx.newError({ name: 'HostError', message: cut(e instanceof Error ? e.message : String(e)) });
        const code = (e as { code?: unknown } | null)?.code;
        if (typeof code === 'string') {
          const codeHandle = ctx.newString(code);
          ctx.setProp(error, 'code', codeHandle);
          codeHandle.dispose();
        }
        return { error };
      }
      if (typeof out !== 'string') {
        return { error: ctx.newError({ name: 'HostError', message: `host answered ${cut(op)} with a ${typeof out}, not a string` }) };
      }
      return ctx.newString(unsafe(out) ? `\u0001${JSON.stringify(out)}` : out);
    });
  }

  /**
   * The host side of `__host_bytes`: `(op, arg, ...ArrayBuffers)` (the prelude checks and slices
   * them). Each input is read where it lies in the wasm heap (one copy there, freed after the
   * call); the answer is copied in as a new ArrayBuffer, counted against the runtime's memory limit.
   */
  #rawHostBytes(ctx: QuickJSContext, host: HostBytes): QuickJSHandle {
    return ctx.newFunction('__host_bytes_raw', (opHandle, argHandle, ...buffers) => {
      if (opHandle === undefined || argHandle === undefined || ctx.typeof(opHandle) !== 'string' || ctx.typeof(argHandle) !== 'number') {
        return { error: ctx.newError({ name: 'TypeError', message: '__host_bytes(op, arg, ...bytes) takes a string, a number and Uint8Arrays' }) };
      }
      const op = ctx.getString(opHandle);
      const arg = ctx.getNumber(argHandle);
      const held: { value: Uint8Array; dispose(): void }[] = [];
      let out: unknown;
      try {
        for (const b of buffers) {
          if (ctx.typeof(b) !== 'object') throw new TypeError('__host_bytes: an input is not bytes');
          held.push(ctx.getArrayBuffer(b));
        }
        out = host(op, arg, held.map((h) => h.value));
      } catch (e) {
        return { error: guestHostError(ctx, e) };
      } finally {
        for (const h of held) h.dispose();
      }
      if (out instanceof Uint8Array) return newBytes(ctx, out);
      if (Array.isArray(out) && out[0] instanceof Uint8Array && typeof out[1] === 'number') {
        const pair = ctx.newArray();
        const bytes = newBytes(ctx, out[0]);
        const n = ctx.newNumber(out[1]);
        ctx.setProp(pair, 0, bytes);
        ctx.setProp(pair, 1, n);
        bytes.dispose();
        n.dispose();
        return pair;
      }
      return { error: ctx.newError({ name: 'HostError', message: `host answered ${cut(op)} with neither bytes nor [bytes, number]` }) };
    });
  }
}

/** A HostError for the guest, with a KitError's `code` when the failure has one. */
function guestHostError(ctx: QuickJSContext, e: unknown): QuickJSHandle {
  const error = ctx.newError({ name: 'HostError', message: cut(e instanceof Error ? e.message : String(e)) });
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    const codeHandle = ctx.newString(code);
    ctx.setProp(error, 'code', codeHandle);
    codeHandle.dispose();
  }
  return error;
}

/** Bytes into the guest as an ArrayBuffer of exactly their length (one copy, into the wasm heap). */
function newBytes(ctx: QuickJSContext, bytes: Uint8Array): QuickJSHandle {
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  return ctx.newArrayBuffer(whole ? bytes.buffer : bytes.slice().buffer);
}

/** Reads a string that crossed out of the guest: as it is, or U+0001 + JSON for one that could not (see prelude.ts). */
function readString(ctx: QuickJSContext, handle: QuickJSHandle): string {
  const kind = ctx.typeof(handle);
  if (kind !== 'string') throw new TypeError(`not a string: ${kind}`);
  const text = ctx.getString(handle);
  if (text.charCodeAt(0) !== 1) return text;
  const decoded: unknown = JSON.parse(text.slice(1));
  if (typeof decoded !== 'string') throw new TypeError('not an encoded string');
  return decoded;
}

function freeContext(loaded: LoadedContext): void {
  loaded.invoke.dispose();
  loaded.describe.dispose();
  loaded.ctx.dispose();
  if (loaded.memoryBytes !== undefined) loaded.runtime.dispose();
}

function disposed(): CallFailure {
  return { error: { code: 'disposed', message: 'this sandbox has been disposed' } };
}

function cut(text: string): string {
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}…` : text;
}

/**
 * QuickJS's own limit, set under the wasm cap so that most bombs are a clean `out_of_memory`
 * guest error: the cap less the fixed part of the instance, less a quarter for malloc's
 * overhead and Emscripten's growth steps (measured: a Map bomb under a limit of cap − 6 MiB − cap/8 still reached the cap first).
 */
export function runtimeMemoryLimit(memoryBytes: number): number {
  return Math.floor(memoryBytes - FIXED_WASM_BYTES - memoryBytes / 4);
}

function resolveLimits(partial: Partial<SandboxLimits> | undefined, nativeStackBytes: number | undefined): SandboxLimits {
  const limits: SandboxLimits = {
    memoryBytes: partial?.memoryBytes ?? DEFAULT_MEMORY_BYTES,
    stackBytes: partial?.stackBytes ?? defaultStackBytes(nativeStackBytes),
    callSteps: partial?.callSteps ?? DEFAULT_CALL_STEPS,
    callMs: partial?.callMs ?? DEFAULT_CALL_MS,
  };
  const { memoryBytes, stackBytes, callSteps, callMs } = limits;
  if (!Number.isSafeInteger(memoryBytes) || memoryBytes < MIN_MEMORY_BYTES + 8 * WASM_PAGE * 16 || memoryBytes > 2 ** 31) {
    throw new TypeError(`memoryBytes must be an integer from ${MIN_MEMORY_BYTES + 8 * WASM_PAGE * 16} to 2 GiB, got ${memoryBytes}`);
  }
  if (!Number.isSafeInteger(stackBytes) || stackBytes < 4096 || stackBytes > 64 * 1024 * 1024) {
    throw new TypeError(`stackBytes must be an integer from 4 KiB to 64 MiB, got ${stackBytes}`);
  }
  if (!Number.isSafeInteger(callSteps) || callSteps < 1) {
    throw new TypeError(`callSteps must be a positive integer, got ${callSteps}`);
  }
  if (!Number.isSafeInteger(callMs) || callMs < 1) {
    throw new TypeError(`callMs must be a positive integer, got ${callMs}`);
  }
  return limits;
}
