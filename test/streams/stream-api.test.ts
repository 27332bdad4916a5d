/**
 * The stream side of the twin API: what `defineTwin` refuses, and what the guest runtime
 * checks in a stream handler's answer before the runner believes it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { defineTwin } from '../../sdk/twin/index.js';
import { buildTwin } from '../../sdk/twin/build.js';
import { createGuestHarness } from '../../sdk/twin/testing.js';

const SDK = fileURLToPath(new URL('../../sdk/twin/index.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'kit-stream-api-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const base = { vendor: 'tcpx', version: '1', models: { hosts: [], resources: [] }, routes: [] };

describe('defineTwin: stream', () => {
  it('refuses a stream on an http twin, a stream without data, and unknown handlers', () => {
    expect(() => defineTwin({ ...base, protocol: 'http', stream: { data: () => undefined } })).toThrow(/stream belongs to a twin whose protocol is not 'http'/);
    expect(() => defineTwin({ ...base, protocol: 'tcpx', stream: {} as never })).toThrow(/stream.data must be a function/);
    expect(() => defineTwin({ ...base, protocol: 'tcpx', stream: { data: () => undefined, end: () => undefined } as never })).toThrow(/stream.end is not a stream handler/);
    expect(() => defineTwin({ ...base, protocol: 'tcpx', stream: { data: () => undefined, open: 1 } as never })).toThrow(/stream.open must be a function/);
    expect(defineTwin({ ...base, protocol: 'tcpx', stream: { data: () => undefined } }).vendor).toBe('tcpx');
  });
});

/** Builds a stream twin whose `data` handler body is given as source. */
async function streamTwin(name: string, dataBody: string) {
  const entry = join(dir, `${name}.ts`);
  writeFileSync(
    entry,
    `import { defineTwin } from ${JSON.stringify(SDK)};
export default defineTwin({ vendor: 'tcpx', version: '1', protocol: 'tcpx', models: { hosts: [], resources: [] }, routes: [],
  stream: { data(ctx, conn, bytes) { ${dataBody} } } });`,
  );
  return createGuestHarness((await buildTwin(entry)).source);
}

function streamCall(h: ReturnType<typeof createGuestHarness>, bytes: string, state: unknown = null) {
  return JSON.parse(h.call('__kit_invoke', JSON.stringify({ kind: 'stream', event: 'data', connection: 'c1', state, bytes, world: 'w', twin: 'tcpx', position: 1, nowMs: 0 }))) as {
    response: { status: number; body: Record<string, unknown> };
    writes: unknown[];
    thrown?: { message: string };
  };
}

describe('guest runtime: stream answers', () => {
  it('says the manifest has a stream, and keeps a state the handler changed in place', async () => {
    const h = await streamTwin('inplace', `conn.state = conn.state ?? { n: 0 }; conn.state.n += bytes.length; ctx.tree.put('seen', 'x', { bytes });`);
    expect((h.manifest as { stream?: boolean }).stream).toBe(true);
    const out = streamCall(h, 'ab\u00ff', { n: 1 });
    expect(out.response.body).toEqual({ state: { n: 4 } });
    expect(out.writes).toEqual([{ type: 'seen', id: 'x', value: { bytes: 'ab\u00ff' } }]);
  });

  it('refuses a send that is not bytes, an empty delimiter, and a Promise', async () => {
    const wide = streamCall(await streamTwin('wide', `return { send: 'ok ✓' };`), 'x');
    expect(wide.thrown?.message).toMatch(/character above U\+00FF/);
    expect(wide.writes).toEqual([]);
    const empty = streamCall(await streamTwin('empty', `return { until: { delimiter: '' } };`), 'x');
    expect(empty.thrown?.message).toMatch(/until.delimiter must not be empty/);
    const promise = streamCall(await streamTwin('promise', `return Promise.resolve({});`), 'x');
    expect(promise.thrown?.message).toMatch(/returned a Promise/);
  });

  it('passes send, close and until through as given', async () => {
    const out = streamCall(await streamTwin('full', `return { send: '221 bye\\r\\n', close: true, state: { done: true }, until: { delimiter: '\\r\\n', tail: '\\r', max: 10 } };`), 'x');
    expect(out.response.body).toEqual({ send: '221 bye\r\n', close: true, state: { done: true }, until: { delimiter: '\r\n', tail: '\r', max: 10 } });
  });
});
