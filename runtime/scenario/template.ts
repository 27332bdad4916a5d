/**
 * The template language of scenario responses: `{{ … }}` holding one dotted lookup,
 * nothing else. No operators, calls, loops or filters, so a template can only copy
 * values that are already there. It is parsed once when the scenario is stored and
 * never evaluated as code.
 *
 *   {{request.params.id}}  {{request.query.limit}}  {{request.body.card.number}}
 *   {{request.headers.idempotency-key}}  {{request.query['expand[]']}}  {{request.id}}
 *   {{tree.customer[request.params.id].name}}  {{state}}
 */

import { getOwn } from '../router/query.js';

export type Step = { key: string } | { ref: Ref };
export interface Ref {
  root: 'request' | 'tree' | 'state';
  steps: Step[];
}
export type Part = string | Ref;
export interface Template {
  parts: Part[];
  /** The whole string is one template: its value keeps its JSON type. */
  exact: boolean;
}

/** What a template can see when a response is rendered. */
export interface TemplateScope {
  request: {
    id: string;
    method: string;
    path: string;
    params: Record<string, string>;
    query: Record<string, string | string[]>;
    headers: Record<string, string>;
    body: unknown;
  };
  state: string;
  /** Reads a record of the twin's tree; given by the runner. */
  lookup?: ((type: string, id: string) => unknown) | undefined;
}

const REQUEST_FIELDS = new Set(['id', 'method', 'path', 'params', 'query', 'headers', 'body']);
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);
const MAX_STEPS = 16;
const MAX_NESTING = 3;

export class TemplateError extends Error {}

/** Compiles a string; a string without `{{` is answered as null (nothing to render). */
export function compileTemplate(text: string, paramNames: ReadonlySet<string> | null): Template | null {
  if (text.indexOf('{{') === -1) return null;
  const parts: Part[] = [];
  let i = 0;
  let literal = '';
  while (i < text.length) {
    const open = text.indexOf('{{', i);
    if (open === -1) {
      literal += text.slice(i);
      break;
    }
    literal += text.slice(i, open);
    const close = text.indexOf('}}', open + 2);
    if (close === -1) throw new TemplateError(`"{{" at character ${open + 1} is never closed with "}}"`);
    const inner = text.slice(open + 2, close).trim();
    if (literal.length > 0) parts.push(literal);
    literal = '';
    parts.push(parseRef(inner, paramNames));
    i = close + 2;
  }
  if (literal.length > 0) parts.push(literal);
  return { parts, exact: parts.length === 1 && typeof parts[0] !== 'string' };
}

class Cursor {
  i = 0;
  constructor(readonly text: string) {}
  peek(): string {
    return this.text[this.i] ?? '';
  }
  done(): boolean {
    return this.i >= this.text.length;
  }
}

const KEY_CHAR = /[A-Za-z0-9_$-]/;

function parseRef(text: string, paramNames: ReadonlySet<string> | null): Ref {
  if (text.length === 0) throw new TemplateError('"{{}}" is empty: write a lookup such as {{request.params.id}}');
  const c = new Cursor(text);
  const ref = readRef(c, 0, paramNames);
  if (!c.done()) throw new TemplateError(`{{${text}}}: unexpected "${c.peek()}" at character ${c.i + 1} (a template is one dotted lookup, nothing else)`);
  return ref;
}

function readKey(c: Cursor): string {
  const start = c.i;
  while (!c.done() && KEY_CHAR.test(c.peek())) c.i++;
  return c.text.slice(start, c.i);
}

function readRef(c: Cursor, nesting: number, paramNames: ReadonlySet<string> | null): Ref {
  const whole = c.text;
  const root = readKey(c);
  if (root !== 'request' && root !== 'tree' && root !== 'state') {
    throw new TemplateError(`{{${whole}}}: a lookup starts with request, tree or state (got "${root || c.peek()}")`);
  }
  const steps: Step[] = [];
  while (!c.done() && (c.peek() === '.' || c.peek() === '[')) {
    if (steps.length >= MAX_STEPS) throw new TemplateError(`{{${whole}}}: at most ${MAX_STEPS} steps`);
    if (c.peek() === '.') {
      c.i++;
      const key = readKey(c);
      if (key.length === 0) throw new TemplateError(`{{${whole}}}: a name must follow "." at character ${c.i + 1}`);
      steps.push({ key });
    } else {
      c.i++;
      const q = c.peek();
      if (q === "'" || q === '"') {
        const end = c.text.indexOf(q, c.i + 1);
        if (end === -1) throw new TemplateError(`{{${whole}}}: unclosed quote`);
        steps.push({ key: c.text.slice(c.i + 1, end) });
        c.i = end + 1;
      } else {
        if (nesting >= MAX_NESTING) throw new TemplateError(`{{${whole}}}: lookups nest at most ${MAX_NESTING} deep`);
        steps.push({ ref: readRef(c, nesting + 1, paramNames) });
      }
      if (c.peek() !== ']') throw new TemplateError(`{{${whole}}}: expected "]" at character ${c.i + 1}`);
      c.i++;
    }
  }
  for (const s of steps) {
    if ('key' in s && FORBIDDEN.has(s.key)) throw new TemplateError(`{{${whole}}}: "${s.key}" cannot be looked up`);
  }
  checkShape(whole, root, steps, paramNames);
  return { root, steps };
}

function checkShape(whole: string, root: Ref['root'], steps: Step[], paramNames: ReadonlySet<string> | null): void {
  const first = steps[0];
  if (root === 'state') {
    if (steps.length > 0) throw new TemplateError(`{{${whole}}}: state is a name, it has no fields`);
    return;
  }
  if (root === 'tree') {
    if (steps.length < 2 || !first || !('key' in first)) {
      throw new TemplateError(`{{${whole}}}: a tree lookup names a type and an id, e.g. {{tree.customer[request.params.id].name}}`);
    }
    return;
  }
  if (!first || !('key' in first) || !REQUEST_FIELDS.has(first.key)) {
    throw new TemplateError(`{{${whole}}}: request has ${[...REQUEST_FIELDS].join(', ')}`);
  }
  const second = steps[1];
  if (first.key === 'params' && paramNames !== null && second && 'key' in second && !paramNames.has(second.key)) {
    const known = [...paramNames];
    throw new TemplateError(`{{${whole}}}: the path has no parameter "${second.key}"${known.length ? ` (it has ${known.join(', ')})` : ' (it has none)'}`);
  }
  if (first.key === 'headers' && second && 'key' in second && second.key !== second.key.toLowerCase()) {
    // Header names arrive in lower case; say so rather than render nothing.
    throw new TemplateError(`{{${whole}}}: header names are lower case ("${second.key.toLowerCase()}")`);
  }
}

/** Evaluates a lookup; undefined when anything along the way is missing. */
export function evaluate(ref: Ref, scope: TemplateScope): unknown {
  if (ref.root === 'state') return scope.state;
  if (ref.root === 'tree') {
    const [typeStep, idStep, ...rest] = ref.steps;
    if (!typeStep || !idStep || !('key' in typeStep)) return undefined;
    const id = stepKey(idStep, scope);
    if (id === undefined || scope.lookup === undefined) return undefined;
    return walk(scope.lookup(typeStep.key, id), rest, scope);
  }
  return walk(scope.request, ref.steps, scope);
}

function stepKey(step: Step, scope: TemplateScope): string | undefined {
  if ('key' in step) return step.key;
  const v = evaluate(step.ref, scope);
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return String(v);
  return undefined;
}

function walk(start: unknown, steps: readonly Step[], scope: TemplateScope): unknown {
  let cur = start;
  for (const step of steps) {
    const key = stepKey(step, scope);
    if (key === undefined || FORBIDDEN.has(key)) return undefined;
    cur = getOwn(cur, key);
    if (cur === undefined) return undefined;
  }
  return cur;
}

/** Renders a template to a value (exact) or a string (mixed with text). */
export function render(t: Template, scope: TemplateScope, budget: Budget): unknown {
  if (t.exact) {
    const v = evaluate(t.parts[0] as Ref, scope);
    budget.charge(sizeOf(v));
    return v;
  }
  let out = '';
  for (const p of t.parts) {
    const piece = typeof p === 'string' ? p : textOf(evaluate(p, scope));
    budget.charge(piece.length);
    out += piece;
  }
  return out;
}

export function textOf(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  try {
    return JSON.stringify(v) ?? '';
  } catch {
    return '';
  }
}

function sizeOf(v: unknown): number {
  if (v === undefined || v === null) return 4;
  if (typeof v === 'string') return v.length;
  if (typeof v !== 'object') return 8;
  return textOf(v).length;
}

/** Caps how much a response's templates may copy, so a few lookups of a large body cannot multiply it. */
export class Budget {
  constructor(private left: number) {}
  charge(n: number): void {
    this.left -= n;
    if (this.left < 0) throw new BudgetExceeded();
  }
}

export class BudgetExceeded extends Error {}
