import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeTrustedContexts } from '../../runtime/sandbox/trusted-node.js';
import { copyJson } from './copy.js';

const here = dirname(fileURLToPath(import.meta.url));

/** A value with every rule JSON applies: toJSON, dropped undefined and functions, null for non-finite numbers, -0 as 0. */
const TRICKY = `({
  id: 'pi_1', amount: 2000, ratio: NaN, big: Infinity, zero: -0, gone: undefined, fn() {},
  when: { toJSON: () => '2026-11-22' }, list: [1, undefined, () => 1, { deep: [null, true] }],
  boxed: new Number(5), text: new String('s'),
})`;

describe('copyJson', () => {
  it('copies JSON data as JSON.parse(JSON.stringify(…)) would, sharing nothing', () => {
    const value = (0, eval)(TRICKY) as Record<string, unknown>;
    const copy = copyJson(value);
    expect(copy).toEqual(JSON.parse(JSON.stringify(value)));
    (copy.list as unknown[]).push('more');
    expect(value.list).toHaveLength(4);
    expect(copyJson(undefined)).toBeUndefined();
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    expect(() => copyJson(cycle)).toThrow(/circular/);
  });

  it('in a trusted context, is the host\'s copy (an object of the host\'s realm), with the same answers and errors', async () => {
    const out = await build({
      stdin: {
        contents: `import { copyJson } from './copy.ts';
          globalThis.check = () => {
            const value = ${TRICKY};
            const copy = copyJson(value);
            copy.list.push('more');
            let cycle = '';
            try { const c = { a: 1 }; c.self = c; copyJson(c); } catch (e) { cycle = e.name + ': ' + e.message; }
            return JSON.stringify({
              same: JSON.stringify(copy) === JSON.stringify({ ...JSON.parse(JSON.stringify(value)), list: [...JSON.parse(JSON.stringify(value.list)), 'more'] }),
              untouched: value.list.length,
              hostRealm: Object.getPrototypeOf(copy) !== Object.prototype,
              cycle,
            });
          };`,
        resolveDir: here,
        loader: 'ts',
      },
      bundle: true,
      format: 'iife',
      write: false,
      logLevel: 'silent',
    });
    using engine = nodeTrustedContexts();
    const loaded = engine.load('copy', (out.outputFiles[0] as { text: string }).text, { hostCall: true });
    expect(loaded).toEqual({ ok: '' });
    const answer = engine.call('copy', 'check', '');
    if (!('ok' in answer)) throw new Error(answer.error.message);
    const got = JSON.parse(answer.ok) as { same: boolean; untouched: number; hostRealm: boolean; cycle: string };
    expect(got).toMatchObject({ same: true, untouched: 4, hostRealm: true });
    expect(got.cycle).toMatch(/^TypeError: Converting circular structure to JSON/);
  });
});
