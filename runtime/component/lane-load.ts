/**
 * Loads a component twin into a lane, on any host: a lane that cannot run one (workerd's
 * `InlineLane`, which compiles no WebAssembly from bytes) answers a load error that says so.
 * Pure; the world runner calls it for a bundle with `component`.
 */
import type { UntrustedLane } from '../lane/types.js';
import type { CallResult } from '../sandbox/sandbox.js';
import type { ComponentCode } from './types.js';

export function loadComponentIntoLane(lane: UntrustedLane, name: string, code: ComponentCode): Promise<CallResult> {
  if (lane.loadComponent === undefined) {
    return Promise.resolve({
      error: {
        code: 'load_error',
        message: `'${name}' is a WebAssembly component twin, and this host cannot run one (the edge variant compiles no WebAssembly at run time and has no worker thread to stop a runaway call): serve it from the Node host`,
      },
    });
  }
  return lane.loadComponent(name, code);
}
