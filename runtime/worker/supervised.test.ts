import { describe, expect, it, beforeAll, afterEach } from 'vitest';
import { build } from 'esbuild';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SupervisedWorker } from './index.js';
import { KitError } from '../errors.js';
import type { TestRequest } from './fixtures/test-worker.js';
import type { CallResult } from '../sandbox/index.js';

let script: URL;
const open: SupervisedWorker<TestRequest, unknown>[] = [];

beforeAll(async () => {
  // Worker threads run plain JavaScript: bundle the TypeScript fixture (dependencies stay
  // external and resolve from the repository's node_modules).
  const outfile = fileURLToPath(new URL(`../../dist/test-fixtures/runtime-worker/test-worker-${process.pid}.mjs`, import.meta.url));
  await build({
    entryPoints: [fileURLToPath(new URL('./fixtures/test-worker.ts', import.meta.url))],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile,
    logLevel: 'silent',
  });
  script = pathToFileURL(outfile);
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((w) => w.close()));
});

function world(name: string, callTimeoutMs = 5000, label?: string): SupervisedWorker<TestRequest, unknown> {
  const w = new SupervisedWorker<TestRequest, unknown>({ script, workerData: { label: label ?? name }, callTimeoutMs, name });
  open.push(w);
  return w;
}

async function rejection(p: Promise<unknown>): Promise<KitError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof KitError) return e;
    throw e;
  }
  throw new Error('expected a rejection');
}

describe('SupervisedWorker', () => {
  it('correlates many calls in flight at once by id', async () => {
    const w = world('echo');
    const values = Array.from({ length: 200 }, (_, i) => ({ i, s: `v${i}` }));
    const answers = await Promise.all(values.map((value) => w.call({ op: 'echo', value })));
    expect(answers).toEqual(values);
    expect(w.pending).toBe(0);
    expect(w.restarts).toBe(0);
  });

  it('sends the calls of one turn in one message, and the first call after a pause at once', async () => {
    const w = world('batches');
    await w.call({ op: 'echo', value: 'warm' });
    const before = (await w.call({ op: 'messages' })) as number;
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => w.call({ op: 'echo', value: i })));
    expect(answers).toEqual(Array.from({ length: 50 }, (_, i) => i));
    // At most two messages for fifty calls: one for the calls held for the turn, and the
    // first call on its own when nothing was sent in the last few milliseconds.
    expect(((await w.call({ op: 'messages' })) as number) - before).toBeLessThanOrEqual(3);
    // A lone call after a pause is not held for a batch: it answers without waiting for a turn to end.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await w.call({ op: 'echo', value: 'alone' })).toBe('alone');
  });

  it('fails only the call that cannot be cloned, in a batch with others, and only the reply that cannot be', async () => {
    const w = world('batch-faults');
    await w.call({ op: 'echo', value: 'warm' });
    const calls = [
      w.call({ op: 'echo', value: 1 }),
      w.call({ op: 'echo', value: () => 2 }),
      w.call({ op: 'uncloneable', inError: false }),
      w.call({ op: 'echo', value: 3 }),
    ];
    const settled = await Promise.allSettled(calls);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect(settled[0]).toMatchObject({ value: 1 });
    expect(settled[3]).toMatchObject({ value: 3 });
    expect(settled[2]).toMatchObject({ reason: { code: 'internal' } });
    expect(w.restarts).toBe(0);
  });

  it('matches answers that come back out of order', async () => {
    const w = world('async');
    const answers = await Promise.all([
      w.call({ op: 'delay', ms: 60, value: 'slow' }),
      w.call({ op: 'delay', ms: 1, value: 'fast' }),
      w.call({ op: 'echo', value: 'sync' }),
    ]);
    expect(answers).toEqual(['slow', 'fast', 'sync']);
  });

  it("keeps a handler's KitError code and details; anything else is internal", async () => {
    const w = world('errors');
    const kit = await rejection(w.call({ op: 'throw', kit: true }));
    expect(kit.code).toBe('not_found');
    expect(kit.details).toEqual({ param: 'id' });
    const plain = await rejection(w.call({ op: 'throw', kit: false }));
    expect(plain.code).toBe('internal');
    expect(plain.message).toBe('plain failure');
    expect(await w.call({ op: 'echo', value: 1 })).toBe(1);
  });

  it('transfers buffers both ways instead of copying them', async () => {
    const w = world('buffers');
    const bytes = new Uint8Array([1, 2, 3]).buffer;
    const answer = (await w.call({ op: 'buffer', bytes }, [bytes])) as { bytes: ArrayBuffer };
    expect(bytes.byteLength).toBe(0); // detached: it moved to the worker
    expect([...new Uint8Array(answer.bytes)]).toEqual([2, 3, 4]);
  });

  it('ends a runaway worker: the running call gets handler_timeout, the ones behind it sandbox_crashed, and the next call starts a new worker', async () => {
    const w = world('runaway', 1000, 'first');
    const before = (await w.call({ op: 'info' })) as { label: string; started: number };
    const runaway = w.call({ op: 'spin', ms: 60_000 });
    const behind = w.call({ op: 'echo', value: 'behind' });
    const [a, b] = await Promise.all([rejection(runaway), rejection(behind)]);
    expect(a.code).toBe('handler_timeout');
    expect(b.code).toBe('sandbox_crashed');
    const after = (await w.call({ op: 'info' })) as { label: string; started: number };
    expect(after.label).toBe('first'); // the same workerData again
    expect(after.started).toBeGreaterThanOrEqual(before.started);
    expect(w.restarts).toBe(1);
  });

  it('measures progress, not age: calls queued behind slow ones each get the full time once they start', async () => {
    const w = world('progress', 1000);
    await w.call({ op: 'echo', value: 'warm' });
    // Five calls of 300 ms each: the last answers 1.5 s after it was sent, yet the worker
    // never went a second without answering.
    const answers = await Promise.all([0, 1, 2, 3, 4].map(() => w.call({ op: 'spin', ms: 300 })));
    expect(answers).toEqual(['spun', 'spun', 'spun', 'spun', 'spun']);
    expect(w.restarts).toBe(0);
  });

  it('fails calls in flight with sandbox_crashed when the worker dies, and comes back', async () => {
    const w = world('dies');
    await w.call({ op: 'echo', value: 'warm' });
    const dying = w.call({ op: 'exit', code: 3 });
    const e = await rejection(dying);
    expect(e.code).toBe('sandbox_crashed');
    expect(e.message).toMatch(/code 3/);
    expect(await w.call({ op: 'echo', value: 'back' })).toBe('back');
    expect(w.restarts).toBe(1);
  });

  it('close rejects what is in flight and refuses later calls', async () => {
    const w = world('closing');
    await w.call({ op: 'echo', value: 'warm' });
    const inflight = rejection(w.call({ op: 'delay', ms: 10_000, value: 'never' }));
    await w.close();
    expect((await inflight).code).toBe('sandbox_crashed');
    await expect(w.call({ op: 'echo', value: 1 })).rejects.toThrow(TypeError);
  });

  it('answers a reply that cannot be cloned with an internal error, and the worker serves on', async () => {
    const w = world('uncloneable');
    expect((await rejection(w.call({ op: 'uncloneable', inError: false }))).code).toBe('internal');
    expect((await rejection(w.call({ op: 'uncloneable', inError: true }))).code).toBe('internal');
    expect(await w.call({ op: 'echo', value: 'fine' })).toBe('fine');
    expect(w.restarts).toBe(0);
  });

  it('refuses a request that cannot be cloned without harming the worker', async () => {
    const w = world('clone');
    await expect(w.call({ op: 'echo', value: () => 1 })).rejects.toThrow();
    expect(await w.call({ op: 'echo', value: 'fine' })).toBe('fine');
    expect(w.restarts).toBe(0);
  });
});

describe('a QuickJS world under the watchdog', () => {
  it('ends a native-heavy loop that interrupts cannot stop, while another world keeps answering; the ended world answers again afterwards', async () => {
    const runaway = world('world-a', 1000);
    const other = world('world-b', 5000);
    const source = `
      function heavy() { for (;;) { for (let i = 0; i < 1000; i++) Array(1e5).fill(0); } }
      function hello(s) { return 'hello ' + s; }`;
    expect(await runaway.call({ op: 'load', name: 'twin', source })).toEqual({ ok: '' });
    expect(await other.call({ op: 'load', name: 'twin', source })).toEqual({ ok: '' });

    const stuck = rejection(runaway.call({ op: 'call', name: 'twin', fn: 'heavy', input: '' }));
    let settled = false;
    void stuck.finally(() => {
      settled = true;
    });
    // World B serves while world A is stuck.
    let answered = 0;
    while (!settled) {
      const r = (await other.call({ op: 'call', name: 'twin', fn: 'hello', input: String(answered) })) as CallResult;
      expect(r).toEqual({ ok: `hello ${answered}` });
      answered++;
    }
    expect((await stuck).code).toBe('handler_timeout');
    expect(answered).toBeGreaterThan(10);
    expect(other.restarts).toBe(0);

    // World A comes back in a new worker: its sandbox is fresh, so the owner loads again.
    expect(await runaway.call({ op: 'call', name: 'twin', fn: 'hello', input: 'x' })).toEqual({ error: { code: 'load_error', message: 'nothing loaded' } });
    expect(await runaway.call({ op: 'load', name: 'twin', source })).toEqual({ ok: '' });
    expect(await runaway.call({ op: 'call', name: 'twin', fn: 'hello', input: 'again' })).toEqual({ ok: 'hello again' });
    expect(runaway.restarts).toBe(1);
  });

  it('runs hostile guests in one world while another world answers throughout', async () => {
    const evil = world('evil', 10_000);
    const good = world('good', 10_000);
    const cases: [string, string][] = [
      ['for (;;) {}', 'timeout'],
      ["/(a+)+$/.test('a'.repeat(30) + 'b');", 'timeout'],
      ["let s = 'x'; for (;;) { s = s + s; s.indexOf('y'); }", 'out_of_memory'],
      ['const a = []; for (;;) a.push({ i: a.length });', 'out_of_memory'],
      ['function f() { return f() + 1; } f();', 'stack_overflow'],
      ["eval('['.repeat(100000) + ']'.repeat(100000));", 'stack_overflow'],
      ['throw null;', 'guest_error'],
    ];
    const source = cases.map(([body], i) => `function case${i}() { ${body} return 'survived'; }`).join('\n') + "\nfunction hello(s) { return 'hello ' + s; }";
    expect(await evil.call({ op: 'load', name: 'twin', source })).toEqual({ ok: '' });
    expect(await good.call({ op: 'load', name: 'twin', source })).toEqual({ ok: '' });

    let done = false;
    let answered = 0;
    const bystander = (async () => {
      while (!done) {
        const r = await good.call({ op: 'call', name: 'twin', fn: 'hello', input: String(answered) });
        expect(r).toEqual({ ok: `hello ${answered}` });
        answered++;
      }
    })();
    const codes: string[] = [];
    for (let i = 0; i < cases.length; i++) {
      const r = (await evil.call({ op: 'call', name: 'twin', fn: `case${i}`, input: '' })) as CallResult;
      codes.push('error' in r ? r.error.code : 'ok');
    }
    done = true;
    await bystander;
    expect(codes).toEqual(cases.map(([, code]) => code));
    expect(answered).toBeGreaterThan(cases.length);
    expect(evil.restarts).toBe(0); // the budget, not the watchdog, stopped every one of them
    expect(await evil.call({ op: 'call', name: 'twin', fn: 'hello', input: 'after' })).toEqual({ ok: 'hello after' });
  });

  it('gives the sandbox in a worker thread the full 512 KiB QuickJS stack, and deep nesting stays a clean stack_overflow', async () => {
    const w = world('stack', 5000);
    const source = `
      function nest() { return String(eval('['.repeat(100000) + ']'.repeat(100000))); }
      function recurse() { function f(n) { return f(n + 1) + 1; } return String(f(0)); }
      function depth() { let d = 0; function f() { d++; f(); } try { f(); } catch (e) {} return String(d); }
      function ok() { return 'ok'; }`;
    expect(await w.call({ op: 'load', name: 's', source })).toEqual({ ok: '' });
    expect(((await w.call({ op: 'limits' })) as { stackBytes: number }).stackBytes).toBe(512 * 1024);
    for (const fn of ['nest', 'recurse']) {
      const r = (await w.call({ op: 'call', name: 's', fn, input: '' })) as CallResult;
      expect('error' in r && r.error.code).toBe('stack_overflow');
    }
    expect(await w.call({ op: 'call', name: 's', fn: 'ok', input: '' })).toEqual({ ok: 'ok' });
    const depth = (await w.call({ op: 'call', name: 's', fn: 'depth', input: '' })) as CallResult;
    expect('ok' in depth && Number(depth.ok)).toBeGreaterThan(2000);
  });
});
