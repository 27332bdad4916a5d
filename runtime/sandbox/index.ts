/** The QuickJS sandbox: one capped WebAssembly instance per world, one context per loaded script; and V8 contexts for trusted code. */
export { loadSandboxModule, sandboxModuleOf, SandboxModule } from './wasm.js';
export {
  WorldSandbox,
  defaultStackBytes,
  runtimeMemoryLimit,
  DEFAULT_CALL_STEPS,
  DEFAULT_MEMORY_BYTES,
  DEFAULT_CALL_MS,
} from './sandbox.js';
export type { SandboxLimits, LoadOptions, CallResult, SandboxErrorCode, HostCall, HostValue, GuestEngine } from './sandbox.js';
export { TrustedContexts } from './trusted.js';
