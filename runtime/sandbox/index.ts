/**
 * The QuickJS sandbox: one capped WebAssembly instance per world, one context per loaded script;
 * and realms in this thread's V8 for trusted code. This barrel is Node's (it reaches `node:fs`,
 * `node:vm`, `node:worker_threads`); code that must also run on workerd imports the Node-free
 * files themselves (see README.md, "On every host").
 */
export { sandboxModuleOf, syncGlueSource, makeSyncGlue, GlueDate, SandboxModule, SandboxGlueError } from './wasm.js';
export type { GlueFactory, SandboxModuleOptions } from './wasm.js';
export { loadSandboxModule, nodeSandboxModule, quickjsPackageFiles } from './wasm-node.js';
export {
  WorldSandbox,
  defaultStackBytes,
  runtimeMemoryLimit,
  DEFAULT_CALL_STEPS,
  DEFAULT_MEMORY_BYTES,
  DEFAULT_CALL_MS,
} from './sandbox.js';
export type { SandboxLimits, LoadOptions, CallResult, SandboxErrorCode, HostBytes, HostCall, HostValue, GuestEngine } from './sandbox.js';
export { nodeHostBytes } from './host-bytes-node.js';
export { TrustedContexts } from './trusted.js';
export type { Prelude, TrustedRealm, TrustedRealmMaker } from './trusted.js';
export { nodeTrustedRealms, nodeTrustedContexts } from './trusted-node.js';
export { edgeTrustedRealms, type TrustedRealmLoader } from './trusted-edge.js';
