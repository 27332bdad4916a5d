/** The scenario (handlers document) contract between this module and the world runner. */

import type { Matcher, TwinResponse } from '../../sdk/twin/types.js';
import type { MissPart, NearMiss, RouteRequest } from '../router/types.js';

/** A request as the scenario sees it: the routed request, its id, and the world clock's now. */
export interface ScenarioRequest extends RouteRequest {
  /** The world's request id (`{{request.id}}`, and the key `noteTwin` finds the request by). */
  id: string;
  /** The world clock's now, ISO 8601, recorded with unmatched requests. */
  at?: string;
}

/** Reads one record of the twin's tree for `{{tree.<type>[<id>]…}}`; given by the runner. */
export type TreeLookup = (type: string, id: string) => unknown;

/** A fault a handler asks for. */
export type ScenarioFault =
  | { type: 'reset' }
  /** A 5xx answer. `body` undefined: the runner writes an error body (code `scenario_fault`). */
  | { type: 'status'; status: number; headers: Record<string, string>; body?: unknown };

/** What a handler does when it matches. `pass`: only delay and/or move state, then the request goes on. */
export type HandlerAction =
  | { kind: 'respond'; status: number; headers: Record<string, string>; body?: unknown }
  | { kind: 'js'; source: string }
  | { kind: 'fault'; fault: ScenarioFault }
  | { kind: 'pass' };

/** One handler of a parsed scenario, in normal form (as written, templates not yet rendered). */
export interface ScenarioHandler {
  index: number;
  /** As written, or `handlers[<index>]` when the document gives none. */
  name: string;
  description?: string;
  match: Matcher;
  when?: { state: string };
  then?: { state: string };
  /** How many times it may match; null: without limit. */
  times: number | null;
  delayMs: number;
  action: HandlerAction;
}

/** A parsed, fully validated handlers document. Make one with `parseScenario`. */
export interface Scenario {
  /** The state a fresh `ScenarioState` starts in (`started` unless the document says). */
  readonly initialState: string;
  readonly handlers: readonly ScenarioHandler[];
  readonly format: 'json' | 'yaml';
}

export interface HandlerRef {
  handlerIndex: number;
  handlerName: string;
}

/**
 * What the runner does with a request. `delayMs` (already capped at 60 s) is waited
 * before answering, whatever the kind; `passedThrough` names the delay/state-only
 * handlers that matched.
 */
export type Decision =
  | ({ kind: 'respond'; response: TwinResponse & { status: number; headers: Record<string, string> }; delayMs: number; passedThrough: string[] } & HandlerRef)
  | ({ kind: 'js'; call: JsCall; delayMs: number; passedThrough: string[] } & HandlerRef)
  | ({ kind: 'fault'; fault: ScenarioFault; delayMs: number; passedThrough: string[] } & HandlerRef)
  /** No handler answers: the twin's own routes take the request (after the delay). */
  | { kind: 'pass'; delayMs: number; passedThrough: string[] };

/**
 * The contract of a `js` handler. The runner evaluates `functionSource` in the twin's
 * sandbox (it is one function expression), calls the function with a `TwinRequest`
 * whose `params` are `params` and the same `TwinContext` a twin handler gets, checks its
 * output with `checkScenarioOutput` (writes only of `scenario.*` types, no events), commits
 * those writes like a twin handler's, and hands what it returned to `jsOutcome`:
 * a response object is answered; `undefined` or `null` lets the request go on to the
 * twin's own routes; anything else (or a throw) is a `handler_error`.
 */
export interface JsCall {
  /** One JavaScript function expression `(function (request, ctx) { … })`. */
  functionSource: string;
  /** The body as the document wrote it. */
  source: string;
  /** Path parameters from the handler's matcher. */
  params: Record<string, string>;
  /** A stable name for caching the compiled function: `scenario:<index>:<name>`. */
  cacheKey: string;
  /** The handler's name, as errors name it. */
  handlerName: string;
}

/** A scenario handler that came closest to an unmatched request. */
export interface ScenarioNearMiss {
  index: number;
  name: string;
  /** Besides the matcher parts: `state` (wrong state) or `times` (used up). */
  failed: MissPart | 'state' | 'times';
  detail: string;
}

/** One request in the report's list of unmatched requests. */
export interface UnmatchedRequest {
  requestId: string;
  at: string | null;
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  /**
   * The scenario's side: no handler matched (with the closest), or only delay/state handlers
   * did; null when no scenario was in force.
   */
  scenario: { matched: false; nearestMiss: ScenarioNearMiss | null } | { matched: true; handlers: string[] } | null;
  /** The twin's side, as the runner reported it with `noteTwin`; null when it did not. */
  twin: { matched: true; route: string } | TwinMiss | null;
}

/**
 * None of the twin's own routes took the request: the closest of them and what failed. When the
 * twin's catch-all route (a path of `/*rest` alone, such as Stripe's "Unrecognized request URL")
 * answered it, `answeredBy` names that route and `nearestMiss` is the closest of the others.
 */
export interface TwinMiss {
  matched: false;
  nearestMiss: NearMiss | null;
  answeredBy?: string;
}

/** How the twin's own routes took a request the scenario passed on, as the runner tells `noteTwin`. */
export type TwinOutcome = { route: string } | { route: null; nearestMiss: NearMiss | null; answeredBy?: string };

export interface HandlerReport {
  index: number;
  name: string;
  description?: string;
  match: Matcher;
  when?: { state: string };
  then?: { state: string };
  /** What it does: answer, run JavaScript, fault, or pass on (delay and/or state only). */
  does: HandlerAction['kind'];
  delayMs: number;
  times: number | null;
  /** Matches left; null: without limit. */
  remaining: number | null;
  matched: number;
  /** Whether it can match now (times left, and in its `when` state). */
  active: boolean;
}

/** The answer of `GET /twin/scenario`; with no scenario in force, `handlers` is empty. */
export interface ScenarioReport {
  state: string;
  initialState: string;
  handlers: HandlerReport[];
  /**
   * Oldest first, the last 100: the requests no scenario handler matched and those the twin's
   * routes did not take; with no scenario in force, those the twin's routes did not take.
   */
  unmatched: UnmatchedRequest[];
  /**
   * Every unmatched request since the scenario was put in force (with none in force: since the
   * last one was removed, or the world opened), including those dropped from the list.
   */
  unmatchedTotal: number;
}
