/**
 * Scenarios (handlers documents): parse and validate, decide per request, report.
 * The format for people is in docs/scenarios.md.
 *
 * How the world runner uses this, per twin:
 *
 *   PUT  …/scenario   scenario = parseScenario(text, contentType)   // throws invalid_scenario: keep the old one
 *                     state = new ScenarioState(scenario)           // replacing starts over
 *   a vendor request  const d = state.decide({ ...routeRequest, id, at }, (type, id) => tree.get(type, id))
 *     respond         answer d.response after d.delayMs
 *     fault           reset: close without an answer; status: answer it (no body: an error body with code scenario_fault)
 *     js              run d.call.functionSource in the twin's sandbox with (request + d.call.params, ctx);
 *                     checkScenarioOutput(d.handlerName, out): only `scenario.*` writes, no events (else handler_error, nothing kept)
 *                     jsOutcome(result, d.handlerName) → respond, or pass (go on as below)
 *     pass            twin routes after d.delayMs: m = twinRouter.match(req)
 *                     state.noteTwin(req, m ? { route: name } : { route: null, nearestMiss: twinRouter.nearestMiss(req) })
 *   GET /twin/scenario  state.report()
 *
 * With no scenario in force, the runner keeps an `UnmatchedJournal` per twin instead, of the
 * requests none of the twin's own routes took (its catch-all route aside), and answers
 * `journal.plainReport()`.
 */
export type {
  Decision,
  HandlerAction,
  HandlerRef,
  HandlerReport,
  JsCall,
  Scenario,
  ScenarioFault,
  ScenarioHandler,
  ScenarioNearMiss,
  ScenarioReport,
  ScenarioRequest,
  TreeLookup,
  TwinMiss,
  TwinOutcome,
  UnmatchedRequest,
} from './types.js';
export { parseScenario, parseDuration, MAX_HANDLERS, MAX_DELAY_MS, DEFAULT_STATE } from './parse.js';
export { ScenarioState, jsCall, twinSide } from './state.js';
export { UnmatchedJournal, MAX_UNMATCHED, MAX_REPORTED_PATH, MAX_REPORTED_QUERY } from './journal.js';
export { jsOutcome } from './js.js';
export { checkScenarioOutput, isScenarioType, SCENARIO_TYPE_PREFIX, type ScenarioOutput } from './writes.js';
