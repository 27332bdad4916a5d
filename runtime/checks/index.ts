/**
 * Checks: JavaScript exporting `check` (or default) as `{ name, run(entry, tree) }`, compiled
 * to a sandbox script that runs in its own context with only the entry and a read-only tree.
 * The runner loads a compiled script once per check, asks `__kit_check_name()` (refusing a
 * module that exports no check), then calls `__kit_check_run()` once per (check, entry).
 */
export { compileCheck, MAX_CHECK_SOURCE } from './compile.js';
export type { CompiledCheck } from './compile.js';
export { checkRunInput, readCheckName, readCheckVerdict } from './result.js';
export type { CheckRunInput, CheckVerdict } from './result.js';
export { CHECK_GUEST_SOURCE, CHECK_MODULE_GLOBAL, MAX_FAILURES, MAX_FAILURE_LENGTH } from './guest.js';
