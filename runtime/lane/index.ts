/**
 * Lanes for untrusted code: `SandboxLane` (a `WorldSandbox` in a worker thread under a watchdog,
 * Node) and `InlineLane` (one in this thread, Node-free, for workerd). This barrel is Node's.
 */
export { SandboxLane } from './lane.js';
export { InlineLane, type InlineLaneOptions } from './inline.js';
export type { LaneOptions, UntrustedLane } from './types.js';
