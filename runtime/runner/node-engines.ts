/**
 * Node's engines, the default wherever this module is imported (runner/index.ts and open.ts
 * import it): built-in twins in `node:vm` contexts, untrusted code in `SandboxLane`s (a worker
 * thread each, under a watchdog).
 */
import { SandboxLane } from '../lane/lane.js';
import { nodeTrustedContexts } from '../sandbox/trusted-node.js';
import { setDefaultGuestEngines, type GuestEngines } from './engines.js';

export const nodeGuestEngines: GuestEngines = {
  trusted: () => nodeTrustedContexts(),
  lane: (options) => new SandboxLane(options),
};

setDefaultGuestEngines(nodeGuestEngines);
