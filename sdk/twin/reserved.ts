/**
 * Record types a twin's own handlers may not write. Pure: the guest runtime refuses them in
 * `tree.put` / `tree.delete`, and the runner checks a scenario's writes against the same rule
 * (runtime/scenario/writes.ts).
 *
 * - `__…`: the SDK's own records (`__due`, `__due_id`: timed moves), written by `ctx.schedule`.
 * - `scenario.…`: a world's scenarios keep their state there (`scenario.calls`), the only
 *   records a scenario `js` handler may write; no twin reads or writes them.
 */

/** The SDK's record types start with this. */
export const SDK_TYPE_PREFIX = '__';

/** A scenario's record types start with this: `ctx.tree.put('scenario.calls', 'n', { n: 1 })`. */
export const SCENARIO_TYPE_PREFIX = 'scenario.';

/** Whether a record type is in the scenarios' namespace: `scenario.` and at least one more character. */
export function isScenarioType(type: string): boolean {
  return type.length > SCENARIO_TYPE_PREFIX.length && type.startsWith(SCENARIO_TYPE_PREFIX);
}
