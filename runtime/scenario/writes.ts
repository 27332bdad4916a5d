/**
 * What a scenario `js` handler may leave in a twin: records of its own, nothing of the twin's.
 *
 * A twin's records change only through its vendor API (a twin has no other write endpoint), and
 * the twin's code relies on their shape (the Stripe twin numbers new ids from its account
 * record), so a record written from outside can break every later request, and stays in the
 * log after the scenario is gone. A scenario keeps its state in a namespace of the twin's tree
 * that no twin reads (record types starting with `scenario.`, which the twin SDK refuses to a
 * twin's own handlers), and emits no events (events are the twin's record of what happened,
 * and drive its webhooks).
 */
import { KitError } from '../errors.js';
import { SCENARIO_TYPE_PREFIX, isScenarioType } from '../../sdk/twin/reserved.js';

export { SCENARIO_TYPE_PREFIX, isScenarioType };

/** What a handler's call would commit, as the runner reads it from the guest. */
export interface ScenarioOutput {
  writes: readonly { type: string; id: string }[];
  events: readonly { type: string }[];
}

/** A name or id as a message quotes it: JSON, cut at 120 characters. */
function quote(text: string): string {
  return JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text);
}

/**
 * Checks the output of a scenario `js` handler before anything of it is committed: every write
 * (a put or a deletion) must be of a `scenario.*` type, and no event may be emitted. Anything
 * else is a KitError `handler_error` (500) naming the handler and the record or event; the
 * caller then commits nothing of that call.
 */
export function checkScenarioOutput(handlerName: string, output: ScenarioOutput): void {
  for (const w of output.writes) {
    if (isScenarioType(w.type)) continue;
    throw new KitError(
      'handler_error',
      `Scenario handler ${quote(handlerName)} wrote the twin's record (type ${quote(w.type)}, id ${quote(w.id)}): ` +
        `a twin's records change only through its vendor API. A scenario keeps its own records under types starting with "${SCENARIO_TYPE_PREFIX}" ` +
        `(such as "${SCENARIO_TYPE_PREFIX}calls"). Nothing this handler wrote was kept.`,
      { handler: handlerName, type: w.type, id: w.id },
    );
  }
  const e = output.events[0];
  if (e !== undefined) {
    throw new KitError(
      'handler_error',
      `Scenario handler ${quote(handlerName)} emitted the event ${quote(e.type)}: events (and the webhooks they send) are the twin's own. ` +
        'Nothing this handler wrote was kept.',
      { handler: handlerName, event: e.type },
    );
  }
}
