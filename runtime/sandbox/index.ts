/** The QuickJS sandbox: one capped WebAssembly instance per world, one context per loaded script; and V8 contexts for trusted code. */
export { loadSandboxModule, SandboxModule } from './wasm.js';
export {
  WorldSandbox,
  defaultStackBytes,
  runtimeMemoryLimit,
  DEFAULT_CALL_STEPS,
  DEFAULT_MEMORY_BYTES,
} from './sandbox.js';
export type { SandboxLimits, CallResult, SandboxErrorCode, HostCall, HostValue, GuestEngine } from './sandbox.js';
export { TrustedContexts } from './trusted.js';
