/** A lane for untrusted code: a `WorldSandbox` in a worker thread under a watchdog. */
export { SandboxLane, type LaneOptions } from './lane.js';
