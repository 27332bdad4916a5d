/**
 * The engines a runner runs guest code in, chosen by its host: `trusted()` for the built-in twins
 * (realms in this thread's V8) and `lane()` for what the world does not trust (scenario `js`
 * handlers, checks, twins from users' sources). Node's (`nodeGuestEngines`, node-engines.ts):
 * `node:vm` contexts and `SandboxLane` worker threads. workerd's (`inlineGuestEngines`): realms
 * from modules written at build time and `InlineLane`s in this thread. Needs no Node API.
 */
import { InlineLane } from '../lane/inline.js';
import type { LaneOptions, UntrustedLane } from '../lane/types.js';
import type { CallResult, HostCall, HostValue, LoadOptions } from '../sandbox/sandbox.js';
import { TrustedContexts, type TrustedRealmMaker } from '../sandbox/trusted.js';
import type { SandboxModule } from '../sandbox/wasm.js';

/** The engine of trusted code: synchronous, in this thread; `callValue` lets values cross (see sandbox/trusted.ts). */
export interface TrustedEngine {
  readonly alive: boolean;
  load(name: string, source: string, options?: Pick<LoadOptions, 'hostCall'>): CallResult;
  call(name: string, fn: string, input: string, hostCall?: HostCall): CallResult;
  callValue(name: string, fn: string, input: object, hostCall: HostCall, hostValue: HostValue): CallResult;
  unload(name: string): void;
  dispose(): void;
}

export interface GuestEngines {
  /** A new trusted engine (one per runner). */
  trusted(): TrustedEngine;
  /** A new lane for untrusted code (a runner makes two: its twins' and scenarios', and its checks'). */
  lane(options: LaneOptions): UntrustedLane;
}

/**
 * The engines of a host without `node:vm`, worker threads or code generation (workerd): trusted
 * realms from modules its build wrote (`edgeTrustedRealms`), and untrusted code in `InlineLane`s
 * over `module` (`sandboxModuleOf` over the `.wasm` imported as a module).
 */
export function inlineGuestEngines(module: SandboxModule | Promise<SandboxModule>, trustedRealms: TrustedRealmMaker): GuestEngines {
  if (typeof trustedRealms !== 'function') throw new TypeError('inlineGuestEngines(module, trustedRealms): trustedRealms must be a realm maker (edgeTrustedRealms)');
  return {
    trusted: () => new TrustedContexts(trustedRealms),
    lane: (options) => new InlineLane({ name: options.name, module, ...(options.limits ? { limits: options.limits } : {}) }),
  };
}

let defaults: GuestEngines | undefined;

/**
 * The engines a runner uses when its options name none. Node's entry points (runner/index.ts,
 * open.ts) set Node's on import (node-engines.ts); a host without them passes its own.
 */
export function defaultGuestEngines(): GuestEngines {
  if (defaults === undefined) {
    throw new TypeError('no GuestEngines were given and this host has no default: pass RunnerOptions.engines (on Node, import runtime/runner/index.js, which sets nodeGuestEngines)');
  }
  return defaults;
}

/** Sets the engines a runner uses when its options name none (Node's, from node-engines.ts). */
export function setDefaultGuestEngines(engines: GuestEngines): void {
  defaults = engines;
}
