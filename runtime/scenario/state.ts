/**
 * A scenario in force: the mutable part (state, counts, unmatched requests) kept by the
 * runner per world and twin. Replacing the scenario means a new `ScenarioState`, so
 * counts and state start over.
 *
 * How a request is decided:
 * - Handlers are matched like twin routes: the most specific path first (a literal
 *   segment beats a parameter, which beats a rest), then document order.
 * - A handler can match only while it has `times` left and, with `when`, while the
 *   scenario is in that state. Every `when` is checked against the state as the request
 *   arrived.
 * - Every matching handler that only delays and/or moves state (no respond, js or
 *   fault) applies, wherever it stands; the first matching handler that answers
 *   (respond, js, fault) answers. Delays add up (capped at 60 s).
 * - `then` moves the state on the match that uses up `times`, or on every match of a
 *   handler without `times`. Moves apply in match order; the last one wins.
 */

import { KitError } from '../errors.js';
import { UnmatchedJournal } from './journal.js';
import { compiledScenario, MAX_DELAY_MS, type CompiledResponse, type CompiledScenario, type TemplatedValue } from './parse.js';
import { Budget, BudgetExceeded, render, textOf, type TemplateScope } from './template.js';
import type {
  Decision,
  HandlerReport,
  JsCall,
  Scenario,
  ScenarioHandler,
  ScenarioNearMiss,
  ScenarioReport,
  ScenarioRequest,
  TreeLookup,
  TwinOutcome,
  UnmatchedRequest,
} from './types.js';

/** How much a rendered response may copy from the request and the tree. */
export const MAX_RENDERED_CHARS = 8 * 1024 * 1024;

export class ScenarioState {
  private readonly compiled: CompiledScenario;
  private current: string;
  private readonly remaining: (number | null)[];
  private readonly matched: number[];
  private readonly journal = new UnmatchedJournal();

  constructor(readonly scenario: Scenario) {
    this.compiled = compiledScenario(scenario);
    this.current = scenario.initialState;
    this.remaining = scenario.handlers.map((h) => h.times);
    this.matched = scenario.handlers.map(() => 0);
  }

  /** The current state name. */
  get state(): string {
    return this.current;
  }

  /**
   * Decides what happens to a request and records the match. `lookup` reads the
   * twin's tree for `{{tree…}}` templates. Throws KitError `body_too_large` when a
   * response's templates would copy more than 8 MB; nothing is recorded then.
   */
  decide(req: ScenarioRequest, lookup?: TreeLookup): Decision {
    const handlers = this.scenario.handlers;
    const arrivedIn = this.current;
    const passes: { h: ScenarioHandler; params: Record<string, string> }[] = [];
    let answer: { h: ScenarioHandler; params: Record<string, string> } | null = null;
    let blocked: ScenarioNearMiss | null = null;
    // In match order (most specific first, then document order): the order state moves apply in.
    const took: ScenarioHandler[] = [];
    for (const m of this.compiled.router.matchAll(req)) {
      const h = handlers[m.value] as ScenarioHandler;
      if (this.remaining[h.index] === 0) {
        blocked ??= { index: h.index, name: h.name, failed: 'times', detail: `it matched its ${h.times} time${h.times === 1 ? '' : 's'} already` };
        continue;
      }
      if (h.when && h.when.state !== arrivedIn) {
        blocked ??= { index: h.index, name: h.name, failed: 'state', detail: `the scenario is in state "${arrivedIn}", the handler wants "${h.when.state}"` };
        continue;
      }
      if (h.action.kind === 'pass') {
        passes.push({ h, params: m.params });
        took.push(h);
      } else if (answer === null) {
        answer = { h, params: m.params };
        took.push(h);
      }
    }

    if (answer === null && passes.length === 0) {
      this.journal.push(req, { matched: false, nearestMiss: blocked ?? this.structuralMiss(req) });
      return { kind: 'pass', delayMs: 0, passedThrough: [] };
    }

    let delayMs = answer?.h.delayMs ?? 0;
    for (const p of passes) delayMs += p.h.delayMs;
    delayMs = Math.min(delayMs, MAX_DELAY_MS);
    const passedThrough = passes.map((p) => p.h.name);

    // Render before recording anything, so a refused render leaves the state untouched.
    let decision: Decision;
    if (answer === null) {
      decision = { kind: 'pass', delayMs, passedThrough };
    } else {
      const { h, params } = answer;
      const ref = { handlerIndex: h.index, handlerName: h.name };
      const action = h.action;
      if (action.kind === 'js') {
        decision = { kind: 'js', ...ref, call: jsCall(h, action.source, params), delayMs, passedThrough };
      } else if (action.kind === 'respond') {
        const r = this.renderResponse(h, params, req, arrivedIn, lookup);
        decision = { kind: 'respond', ...ref, response: r, delayMs, passedThrough };
      } else if (action.kind === 'fault' && action.fault.type === 'status') {
        const r = this.renderResponse(h, params, req, arrivedIn, lookup);
        const fault = { type: 'status' as const, status: r.status, headers: r.headers, ...(r.body !== undefined ? { body: r.body } : {}) };
        decision = { kind: 'fault', ...ref, fault, delayMs, passedThrough };
      } else {
        decision = { kind: 'fault', ...ref, fault: { type: 'reset' }, delayMs, passedThrough };
      }
    }

    for (const h of took) this.record(h);
    return decision;
  }

  /**
   * Tells the scenario how the twin's own routes took a request it passed on. A miss of
   * the twin is listed among the unmatched requests (with the twin's nearest miss),
   * beside the scenario's side if the scenario did not match it either.
   */
  noteTwin(req: ScenarioRequest, outcome: TwinOutcome): void {
    const twin = twinSide(outcome);
    const listed = this.journal.find(req.id);
    if (listed !== undefined) {
      listed.twin = twin;
      return;
    }
    if (twin.matched) return; // the scenario took it and so did the twin: nothing went unmatched
    // The scenario's side is no longer on the list (or decide was not called): say what matches now.
    const handlers = this.compiled.router.matchAll(req).map((m) => (this.scenario.handlers[m.value] as ScenarioHandler).name);
    const scenario: UnmatchedRequest['scenario'] = handlers.length > 0 ? { matched: true, handlers } : { matched: false, nearestMiss: this.structuralMiss(req) };
    this.journal.push(req, scenario, twin);
  }

  /** The scenario report (`GET /twin/scenario`). */
  report(): ScenarioReport {
    const handlers: HandlerReport[] = this.scenario.handlers.map((h) => {
      const remaining = this.remaining[h.index] ?? null;
      const r: HandlerReport = {
        index: h.index,
        name: h.name,
        match: h.match,
        does: h.action.kind,
        delayMs: h.delayMs,
        times: h.times,
        remaining,
        matched: this.matched[h.index] ?? 0,
        active: remaining !== 0 && (h.when === undefined || h.when.state === this.current),
      };
      if (h.description !== undefined) r.description = h.description;
      if (h.when) r.when = { ...h.when };
      if (h.then) r.then = { ...h.then };
      return r;
    });
    // A copy: whoever holds a report cannot change the scenario or its record through it.
    return { state: this.current, initialState: this.scenario.initialState, handlers: structuredClone(handlers), ...this.journal.list() };
  }

  private record(h: ScenarioHandler): void {
    this.matched[h.index] = (this.matched[h.index] ?? 0) + 1;
    const left = this.remaining[h.index];
    if (left !== null && left !== undefined) this.remaining[h.index] = left - 1;
    if (h.then && (h.times === null || this.remaining[h.index] === 0)) this.current = h.then.state;
  }

  private structuralMiss(req: ScenarioRequest): ScenarioNearMiss | null {
    return this.compiled.router.nearestMiss(req);
  }

  private renderResponse(
    h: ScenarioHandler,
    params: Record<string, string>,
    req: ScenarioRequest,
    state: string,
    lookup: TreeLookup | undefined,
  ): { status: number; headers: Record<string, string>; body?: unknown } {
    const c = this.compiled.responses[h.index] as CompiledResponse;
    const scope: TemplateScope = {
      request: { id: req.id, method: req.method, path: req.path, params, query: req.query, headers: req.headers, body: req.body },
      state,
      lookup,
    };
    const budget = new Budget(MAX_RENDERED_CHARS);
    try {
      const headers: Record<string, string> = {};
      for (const [name, t] of c.headers) {
        if (typeof t === 'string') {
          headers[name] = t;
          continue;
        }
        const v = render(t, scope, budget);
        if (v === undefined || v === null) continue; // a header whose only template found nothing is left out
        // Header values come from the request; a line break would split the answer.
        headers[name] = (typeof v === 'string' ? v : textOf(v)).replace(/[\r\n\0]/g, ' ');
      }
      const body = c.body === undefined ? undefined : renderValue(c.body, scope, budget);
      return body === undefined ? { status: c.status, headers } : { status: c.status, headers, body };
    } catch (e) {
      if (e instanceof BudgetExceeded) {
        throw new KitError('body_too_large', `handlers[${h.index}] (${h.name}): the templated response would copy more than ${MAX_RENDERED_CHARS} characters`, { handler: { index: h.index, name: h.name } });
      }
      throw e;
    }
  }
}

function renderValue(v: TemplatedValue, scope: TemplateScope, budget: Budget): unknown {
  switch (v.t) {
    case 'lit':
      return v.v;
    case 'tpl':
      return render(v.tpl, scope, budget);
    case 'arr':
      return v.items.map((x) => {
        const r = renderValue(x, scope, budget);
        return r === undefined ? null : r;
      });
    case 'obj': {
      const out: Record<string, unknown> = {};
      for (const [k, x] of v.entries) {
        const r = renderValue(x, scope, budget);
        if (r !== undefined) out[k] = r;
      }
      return out;
    }
  }
}

/** The twin's side of an unmatched request, from what the runner told `noteTwin`. */
export function twinSide(outcome: TwinOutcome): NonNullable<UnmatchedRequest['twin']> {
  if (outcome.route !== null) return { matched: true, route: outcome.route };
  return outcome.answeredBy === undefined
    ? { matched: false, nearestMiss: outcome.nearestMiss }
    : { matched: false, nearestMiss: outcome.nearestMiss, answeredBy: outcome.answeredBy };
}

/** The `JsCall` for a js handler; the runner also uses it to load every handler's function up front. */
export function jsCall(h: ScenarioHandler, source: string, params: Record<string, string>): JsCall {
  return {
    // The directive keeps the handler strict like bundled twin code; the newline
    // before `})` lets the source end in a line comment.
    functionSource: `(function (request, ctx) {\n"use strict";\n${source}\n})`,
    source,
    params,
    cacheKey: `scenario:${h.index}:${h.name}`,
    handlerName: h.name,
  };
}
