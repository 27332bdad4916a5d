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
  UnmatchedRequest,
} from './types.js';
export { parseScenario, parseDuration, MAX_HANDLERS, MAX_DELAY_MS, DEFAULT_STATE } from './parse.js';
export { ScenarioState, MAX_UNMATCHED } from './state.js';
export { jsOutcome } from './js.js';
