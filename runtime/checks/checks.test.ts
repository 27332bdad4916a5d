import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { KitError } from '../errors.js';
import { compileCheck, MAX_CHECK_NESTING, MAX_CHECK_SOURCE, nestingDepth } from './compile.js';
import { MAX_FAILURES } from './guest.js';
import { checkRunInput, readCheckName, readCheckVerdict } from './result.js';
import type { CheckVerdict } from './result.js';

/** A committed tree behind a fake `__host_call`, as the runner's would answer. */
function tree(records: Record<string, Record<string, unknown>>) {
  const calls: string[] = [];
  const hostCall = (op: string, argJson: string): string => {
    calls.push(op);
    const arg = JSON.parse(argJson) as { type: string; id?: string; after?: string; limit?: number; reverse?: boolean };
    const of = records[arg.type] ?? {};
    if (op === 'get') return JSON.stringify(of[arg.id ?? ''] ?? null);
    if (op === 'count') return String(Object.keys(of).length);
    if (op === 'list') {
      let ids = Object.keys(of).sort().filter((id) => arg.after === undefined || id > arg.after);
      if (arg.reverse) ids = ids.reverse();
      const page = ids.slice(0, arg.limit ?? ids.length);
      return JSON.stringify({ items: page.map((id) => ({ id, value: of[id] })), hasMore: page.length < ids.length });
    }
    throw new Error(`unknown op ${op}`);
  };
  return { hostCall, calls };
}

/** Loads a compiled check in a fresh context (the real runner uses the sandbox; this is the same protocol). */
async function load(source: string, records: Record<string, Record<string, unknown>> = {}) {
  const { script } = await compileCheck(source);
  const t = tree(records);
  const context = vm.createContext({ __host_call: t.hostCall });
  vm.runInContext(script, context);
  const name = (): string => readCheckName(vm.runInContext('__kit_check_name()', context));
  const run = (entry: unknown): CheckVerdict => {
    const fn = vm.runInContext('__kit_check_run', context) as (input: string) => string;
    return readCheckVerdict(fn(checkRunInput({ entry, twin: 'hello', world: 'w' })));
  };
  return { name, run, calls: t.calls };
}

async function refusal(source: string, deadlineMs?: number): Promise<KitError> {
  try {
    await compileCheck(source, deadlineMs);
  } catch (e) {
    expect(e).toBeInstanceOf(KitError);
    expect((e as KitError).code).toBe('invalid_check');
    return e as KitError;
  }
  throw new Error('compileCheck accepted it');
}

const entry = { position: 3, occurredAt: '2026-01-01T00:00:00.000Z', cause: { kind: 'request', method: 'POST', route: 'greetings.create', path: '/v1/greetings', status: 200, requestId: 'r' }, writes: [{ type: 'greeting', id: 'g1', value: { name: '' } }] };

describe('compileCheck', () => {
  it('refuses a source that does not parse, with its place', async () => {
    const e = await refusal('export const check = {');
    expect(e.message).toMatch(/does not parse: line 1, column \d+/);
    expect(e.details).toMatchObject({ line: 1 });
  });

  it('refuses a module that exports no check', async () => {
    expect((await refusal('export function helper() {}')).message).toMatch(/exports no check \(it exports helper\)/);
    expect((await refusal('const x = 1;')).message).toMatch(/exports nothing/);
    expect((await refusal('module.exports = { check: {} };')).message).toMatch(/ES module/);
    expect((await refusal('')).message).toMatch(/empty/);
  });

  it('refuses imports of any kind: a check sees only the entry and the tree', async () => {
    expect((await refusal("import fs from 'node:fs'; export default { name: 'x', run() {} };")).message).toMatch(/cannot import anything \(it imports 'node:fs'\)/);
    expect((await refusal("export default { name: 'x', run() { return import('./y.js'); } };")).message).toMatch(/cannot import/);
    expect((await refusal("export * from './other.js'; export const check = 1;")).message).toMatch(/cannot import/);
  });

  it('refuses top-level await: a check runs synchronously', async () => {
    expect((await refusal("await 1; export const check = { name: 'x', run() {} };")).message).toMatch(/cannot be compiled: .*[Tt]op-level await/);
  });

  it('refuses a source too large, or not text', async () => {
    expect((await refusal(`export default 1;//${'x'.repeat(MAX_CHECK_SOURCE)}`)).message).toMatch(/larger than/);
    expect((await refusal(42 as never)).message).toMatch(/source text/);
  });

  it('measures bracket nesting as code nests, not inside comments, strings or template text', async () => {
    expect(nestingDepth('f({ a: [1, (2)] })')).toBe(4);
    expect(nestingDepth(`const s = '((((' + "[[[" ; // {{{{\n /* (((( */ x = 1;`)).toBe(0);
    expect(nestingDepth('const t = `a ( b ${ f({ c: 1 }) } { d`;')).toBe(3);
    expect(nestingDepth('const t = `${ `${ [1] }` }`;')).toBe(3);
    expect(nestingDepth("const s = 'it\\'s ( not';")).toBe(0);
    expect(nestingDepth('((((')).toBe(4);
  });

  it('refuses a check nested deeper than the limit before compiling it, and compiles others after', async () => {
    const blocks = (d: number): string => `export const check = { name: 'deep', run() { ${'{'.repeat(d)}${'}'.repeat(d)} return { ok: true }; } };`;
    // 120,000 nested blocks fit in the size limit; esbuild took 131 s over them and then stopped.
    expect((await refusal(blocks(120_000))).message).toBe(`the check nests brackets deeper than ${MAX_CHECK_NESTING}`);
    expect((await refusal(`export default ${'['.repeat(MAX_CHECK_NESTING + 1)}${']'.repeat(MAX_CHECK_NESTING + 1)};`)).message).toMatch(/nests brackets deeper/);
    // At the limit it compiles (the object and the function take the first three levels).
    expect((await compileCheck(blocks(MAX_CHECK_NESTING - 3))).script).toContain('__kit_check_run');
    expect((await compileCheck("export const check = { name: 'after', run() { return { ok: true }; } };")).script).toContain('__kit_check_run');
  });

  it('parses in this thread within bounds: what took esbuild seconds is quick, and nesting past the parser\'s stack is refused by name', async () => {
    // 6 KB: 2,000 nested arrow functions took esbuild 24.5 s; they outrun the parser's stack at once.
    const arrows = `export const check = { name: 'slow', run() { return ${'x=>'.repeat(2000)}1; } };`;
    let started = performance.now();
    expect((await refusal(arrows)).message).toMatch(/^the check nests too deep to compile \(line 1, column \d+\); simplify it$/);
    expect(performance.now() - started).toBeLessThan(1500);
    // 20,000 declarations in one function: acorn's scopes searched a list per declaration (1.6 s); sets now.
    const lets = `export const check = { name: 'lets', run() { ${Array.from({ length: 20_000 }, (_, i) => `let a${i};`).join('')} return true; } };`;
    started = performance.now();
    expect((await compileCheck(lets)).script).toContain('__kit_check_run');
    expect(performance.now() - started).toBeLessThan(1500);
    expect((await refusal(`export const check = { name: 'twice', run() { let a = 1; let a = 2; } };`)).message).toMatch(/does not parse: line 1, column \d+: Identifier 'a' has already been declared/);
  });

  it('refuses a check once the deadline passes, and compiles the next', async () => {
    const big = `export const check = { name: 'big', run(e) { let s = 0;\n${'for (let i = 0; i < 10; i++) { s += e.position * i; if (s > 3) { s = Math.max(s, 1); } }\n'.repeat(2800)} return true; } };`;
    expect(big.length).toBeLessThan(MAX_CHECK_SOURCE);
    const e = await refusal(big, 1);
    expect(e.message).toBe('the check took longer than 1 ms to compile; simplify it');
    expect(e.details).toEqual({ deadlineMs: 1 });
    expect((await compileCheck(big)).script).toContain('__kit_check_run');
    expect((await load("export const check = { name: 'after', run() { return { ok: true }; } };")).name()).toBe('after');
  });

  it('keeps the module whole: every export form, live bindings, strict mode, and the check\'s own lines', async () => {
    const source = [
      "export let count = 0;",
      "function bump() { count++; }",
      "export { bump as increment };",
      "export const { a, b: [c] } = { a: 1, b: [2] };",
      "export default class Rule { static get name() { return 'by-class'; } static run(entry) { bump(); if (entry.position === 99) throw new Error('line ' + new Error().stack); return count === 1 && a === 1 && c === 2 && this === Rule && (function () { return this; })() === undefined; } }",
    ].join('\n');
    const c = await load(source);
    expect(c.name()).toBe('by-class');
    expect(c.run(entry)).toEqual({ pass: true, failures: [] });
    // Anonymous defaults, a hashbang, and an export list that ends a line: the statement after it stays a statement.
    expect((await load("#!/usr/bin/env node\nexport default { name: 'anon', run() { return true; } }")).name()).toBe('anon');
    expect((await load("const check = { name: 'listed', run() { return x === 1; } }\nexport { check }\n;[1].forEach(() => {});\nvar x = 1;")).run(entry)).toEqual({ pass: true, failures: [] });
    expect((await load("export default function () {}; export const check = { name: 'fn-default', run() {} };")).name()).toBe('fn-default');
    expect((await load("export { check as 'check' }; const check = { name: 'string-name', run() {} };")).name()).toBe('string-name');
    // An error's place is the check's own line: the script adds no line before it.
    const where = (await load("export const check = {\n  name: 'where',\n  run() { null.x; },\n};")).run(entry);
    expect(where.failures[0]).toMatch(/^the check threw: /);
    const { script } = await compileCheck("export const check = {\n  name: 'where',\n  run() { return 1; },\n};");
    expect(script.split('\n')[2]).toBe('  run() { return 1; },');
  });

  it('finds out once loaded that the export is not a check', async () => {
    for (const [source, reason] of [
      ['export default 42;', /exports no check/],
      ["export const check = { run() {} };", /has no name/],
      ["export const check = { name: 'x' };", /no run\(entry, tree\)/],
    ] as const) {
      const c = await load(source);
      expect(() => c.name(), source).toThrow(reason);
      expect(c.run(entry), source).toEqual({ pass: false, failures: [expect.stringMatching(reason)] });
    }
  });
});

describe('running a check', () => {
  it('answers its declared name, from `check` or from default', async () => {
    expect((await load("export const check = { name: 'names-set', run() {} };")).name()).toBe('names-set');
    expect((await load("export default { name: 'by-default', run() {} };")).name()).toBe('by-default');
  });

  it('maps every result form to pass or failures', async () => {
    const cases: [string, CheckVerdict][] = [
      ['return true', { pass: true, failures: [] }],
      ['return undefined', { pass: true, failures: [] }],
      ['return []', { pass: true, failures: [] }],
      ['return { failures: [] }', { pass: true, failures: [] }],
      ["return 'name is empty'", { pass: false, failures: ['name is empty'] }],
      ["return ['a', 'b']", { pass: false, failures: ['a', 'b'] }],
      ["return { failures: ['c'] }", { pass: false, failures: ['c'] }],
      ['return false', { pass: false, failures: ['the check returned false'] }],
      ['return 7', { pass: false, failures: [expect.stringMatching(/^run returned number/) as unknown as string] }],
      ['return Promise.resolve(true)', { pass: false, failures: ['run returned a Promise: checks are synchronous'] }],
      ["throw new Error('boom')", { pass: false, failures: ['the check threw: boom'] }],
      ['throw { toString() { throw 1; } }', { pass: false, failures: ['the check threw: a value that cannot be described'] }],
    ];
    for (const [body, expected] of cases) {
      expect((await load(`export const check = { name: 'c', run(entry, tree) { ${body}; } };`)).run(entry), body).toEqual(expected);
    }
  });

  it('caps how many failures one run reports', async () => {
    const v = (await load("export const check = { name: 'c', run() { return Array.from({ length: 1000 }, (_, i) => 'f' + i); } };")).run(entry);
    expect(v.failures).toHaveLength(MAX_FAILURES + 1);
    expect(v.failures[MAX_FAILURES]).toBe('… and 900 more failures');
  });

  it('sees the entry and reads the tree through the host, read-only', async () => {
    const source = `
      export const check = {
        name: 'greetings-have-names',
        run(entry, tree, where) {
          const failures = [];
          for (const w of entry.writes) {
            if (w.type === 'greeting' && w.value && !w.value.name) failures.push(where.twin + ' ' + w.id + ' at ' + entry.position + ' has no name');
          }
          if (tree.get('greeting', 'g2').name !== 'Bob') failures.push('g2 should be Bob');
          if (tree.get('greeting', 'none') !== undefined) failures.push('none should be missing');
          if (tree.count('greeting') !== 2) failures.push('two greetings');
          const page = tree.list('greeting', { limit: 1 });
          if (page.items[0].id !== 'g1' || !page.hasMore) failures.push('list');
          try { tree.put('greeting', 'g3', {}); failures.push('put did not throw'); } catch (e) { if (!/read-only|cannot write/.test(e.message)) failures.push(e.message); }
          try { tree.delete('greeting', 'g1'); failures.push('delete did not throw'); } catch (e) {}
          return failures;
        },
      };`;
    const c = await load(source, { greeting: { g1: { name: '' }, g2: { name: 'Bob' } } });
    expect(c.run(entry)).toEqual({ pass: false, failures: ['hello g1 at 3 has no name'] });
    expect(c.calls).toEqual(['get', 'get', 'count', 'list']);
    expect(c.run({ ...entry, writes: [] })).toEqual({ pass: true, failures: [] });
  });
});

describe('reading guest answers', () => {
  it('refuses a malformed verdict', async () => {
    for (const out of ['nope', '{}', '{"pass":true,"failures":["x"]}', '{"pass":false,"failures":[1]}', 42]) {
      expect(() => readCheckVerdict(out)).toThrow(KitError);
    }
    expect(() => readCheckName('')).toThrow(KitError);
  });
});
