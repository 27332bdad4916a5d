/**
 * What a runner needs of a lane for untrusted code, whatever runs it: `SandboxLane` (a worker
 * thread under a watchdog, Node) or `InlineLane` (this thread, step budgets; workerd).
 */
import type { CallResult, HostCall, LoadOptions, SandboxLimits } from '../sandbox/sandbox.js';
import type { ComponentCode } from '../component/types.js';

export interface LaneOptions {
  /** Names the worker thread and the errors, e.g. `world local/demo`. */
  name: string;
  /** The sandbox's limits; `callMs` is also what the watchdog allows a call, plus `graceMs`. */
  limits?: Partial<SandboxLimits>;
  /** How long past its wall limit an operation may run before the worker is ended. Default callMs / 10, at least 100 ms. */
  graceMs?: number;
  /** How long a new worker may take to start. Default 30 s. */
  startupMs?: number;
}

/**
 * One `WorldSandbox` behind a queue: operations run one at a time, in order; a sandbox that died
 * (ended by a watchdog, out of memory) is replaced on the next operation with every script that
 * was loaded and not unloaded loaded again.
 */
export interface UntrustedLane {
  /** Loads `source` as context `name` (see `WorldSandbox.load`); kept for every later sandbox once it loads. */
  load(name: string, source: string, options?: LoadOptions): Promise<CallResult>;
  /**
   * Loads a WebAssembly component twin as context `name` (runtime/component/): its own instance
   * and capped memory beside the sandbox, answering `__kit_manifest` and `__kit_invoke` like a
   * loaded bundle. Absent on a lane that cannot run one (InlineLane: workerd compiles no
   * WebAssembly from bytes).
   */
  loadComponent?(name: string, code: ComponentCode): Promise<CallResult>;
  /** Calls `fn` of context `name` (see `WorldSandbox.call`); `hostCall` answers the guest's host calls. */
  call(name: string, fn: string, input: string, hostCall?: HostCall): Promise<CallResult>;
  /** Drops context `name`. */
  unload(name: string): Promise<void>;
  /** What the context's own runtime holds (see `WorldSandbox.memoryUsed`). */
  memoryUsed(name: string): Promise<number | null>;
  /** Ends the sandbox; operations waiting answer `disposed`. Idempotent. */
  close(): Promise<void>;
  /** How many sandboxes were started to replace one that was ended or died. */
  readonly restarts: number;
  /** The longest an operation can hold the lane by the wall clock, in ms. */
  readonly limitMs: number;
}
