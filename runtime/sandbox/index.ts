/** The QuickJS sandbox: one capped WebAssembly instance per world, one context per loaded script. */
export { loadSandboxModule, SandboxModule } from './wasm.js';
export {
  WorldSandbox,
  defaultStackBytes,
  runtimeMemoryLimit,
  DEFAULT_CALL_STEPS,
  DEFAULT_MEMORY_BYTES,
} from './sandbox.js';
export type { SandboxLimits, CallResult, SandboxErrorCode, HostCall } from './sandbox.js';
