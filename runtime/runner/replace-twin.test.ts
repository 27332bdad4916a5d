/**
 * `WorldRunner.replaceTwin`: a twin from sources swapped while served (kit world serve --dev).
 * The next request runs the new code; the twin's log and records stay; code that does not
 * load, or that claims another vendor, leaves the old code serving; a failed build shows in
 * the twin's status.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { buildTwin } from '../../sdk/twin/build.js';
import { openTestWorld } from '../../test/helpers/world.js';
import type { TwinBundle } from './types.js';

const SDK = fileURLToPath(new URL('../../sdk/twin/index.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'kit-replace-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A twin `counter` whose POST keeps a record and answers `word`; built untrusted, as a path twin is. */
async function counterTwin(word: string, vendor = 'counter'): Promise<TwinBundle> {
  const file = join(dir, `${vendor}-${word}.ts`);
  writeFileSync(
    file,
    `import { defineTwin } from ${JSON.stringify(SDK)};
export default defineTwin({
  vendor: ${JSON.stringify(vendor)}, version: '1.0.0', protocol: 'http',
  models: { hosts: ['api.counter.test'], resources: ['tick'] },
  routes: [
    { name: 'tick', match: { method: 'POST', path: '/ticks' }, handle: (req, ctx) => { const n = ctx.tree.count('tick') + 1; ctx.tree.put('tick', 't' + n, { n }); return { status: 201, body: { n, word: ${JSON.stringify(word)} } }; } },
  ],
});
`,
  );
  const built = await buildTwin(file);
  return { ...built, trusted: false, origin: { kind: 'path', path: 'twins/counter' } };
}

describe('replaceTwin', () => {
  it('serves the new code on the next request, keeping the log and the records', async () => {
    const w = await openTestWorld({ vendors: [], more: [await counterTwin('first')] });
    try {
      expect((await w.vendor('POST', '/counter/ticks')).json).toEqual({ n: 1, word: 'first' });
      const before = (await w.api('GET', '/twins/counter/status')).json;
      expect(before.source).toMatchObject({ kind: 'path', path: 'twins/counter', build: { ok: true } });
      await w.runner.replaceTwin(await counterTwin('second'));
      expect((await w.vendor('POST', '/counter/ticks')).json).toEqual({ n: 2, word: 'second' });
      expect((await w.api('GET', '/twins/counter/status')).json.position).toBe(2);
    } finally {
      await w.close();
    }
  });

  it('keeps the old code serving when the new code does not load or claims another vendor', async () => {
    const w = await openTestWorld({ vendors: [], more: [await counterTwin('first')] });
    try {
      const good = await counterTwin('first');
      await expect(w.runner.replaceTwin({ ...good, source: `${good.source}\nthrow new Error('boom at load');` })).rejects.toMatchObject({ code: 'invalid_twin' });
      expect((await w.vendor('POST', '/counter/ticks')).json).toEqual({ n: 1, word: 'first' });
      // The bundle says `counter`, the code it carries says `other`: the code's word is taken.
      const other = await counterTwin('x', 'other');
      await expect(w.runner.replaceTwin({ ...other, vendor: 'counter' })).rejects.toThrow(/names vendor "other"/);
      expect((await w.vendor('POST', '/counter/ticks')).json).toEqual({ n: 2, word: 'first' });
    } finally {
      await w.close();
    }
  });

  it('shows a failed build in the twin status until a good one replaces it', async () => {
    const w = await openTestWorld({ vendors: [], more: [await counterTwin('first')] });
    try {
      w.runner.twinBuildFailed('counter', { message: 'Expected ";" but found "}"', file: 'twins/counter/twin/index.ts', line: 7, column: 3 });
      const failed = (await w.api('GET', '/twins')).json.twins[0];
      expect(failed.source).toMatchObject({ kind: 'path', build: { ok: false, error: { file: 'twins/counter/twin/index.ts', line: 7, column: 3 } } });
      expect((await w.vendor('POST', '/counter/ticks')).json.word).toBe('first');
      await w.runner.replaceTwin(await counterTwin('second'));
      expect((await w.api('GET', '/twins/counter/status')).json.source.build).toMatchObject({ ok: true });
    } finally {
      await w.close();
    }
  });
});
