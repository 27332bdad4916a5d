/**
 * Messages between a `SandboxLane` (main side) and its worker. One operation is in flight at a
 * time; host calls travel on a port of their own and are answered while the worker waits.
 */
import type { MessagePort } from 'node:worker_threads';
import type { CallResult, LoadOptions, SandboxLimits } from '../sandbox/index.js';
import type { ComponentCode } from '../component/types.js';

/** What the worker is started with. */
export interface LaneWorkerData {
  /** The compiled QuickJS module (a `WebAssembly.Module` crosses threads without recompiling). */
  wasm: WebAssembly.Module;
  limits: Partial<SandboxLimits>;
  /** Host calls: the worker posts `[op, arg]` here and waits on `signal` for the answer. */
  hostPort: MessagePort;
  /** `Int32Array` over a SharedArrayBuffer: index 0 is set to 1 when a host answer is posted. */
  signal: Int32Array;
}

/** main → worker: one operation. */
export type LaneOp =
  | { kind: 'load'; name: string; source: string; options: LoadOptions }
  | { kind: 'load-component'; name: string; code: ComponentCode }
  | { kind: 'call'; name: string; fn: string; input: string; host: boolean }
  | { kind: 'unload'; name: string }
  | { kind: 'memory'; name: string };

/** worker → main: the answer to the operation in flight, and whether the sandbox is still usable. */
export interface LaneReply {
  result: CallResult | { memory: number | null };
  alive: boolean;
}

/** main → worker on the host port: a host call's answer, or the failure the guest sees as a HostError. */
export type HostReply = [ok: 0, text: string] | [failed: 1, message: string, code: string | null];
