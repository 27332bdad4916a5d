/**
 * The lane runs its sandbox in a worker thread (dist/runtime/lane/lane-worker.js: `make build`
 * first). What is asserted is what its owner notices: answers, host calls served from this
 * thread, a runaway stopped near its wall limit, this thread free meanwhile, and a sandbox that
 * comes back with what was loaded.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SandboxLane } from './index.js';

const lanes: SandboxLane[] = [];
function lane(callMs = 600): SandboxLane {
  const l = new SandboxLane({ name: 'test lane', limits: { callMs }, graceMs: 150 });
  lanes.push(l);
  return l;
}

afterEach(async () => {
  await Promise.all(lanes.splice(0).map((l) => l.close()));
});

const ECHO = `globalThis.echo = (s) => 'echo:' + s; globalThis.read = (s) => __host_call('get', s) + '!';`;

describe('SandboxLane', () => {
  it('loads a script and calls it, with host calls answered by this thread', async () => {
    const l = lane();
    expect(await l.load('a', ECHO, { hostCall: true })).toEqual({ ok: '' });
    expect(await l.call('a', 'echo', 'x')).toEqual({ ok: 'echo:x' });
    const seen: string[] = [];
    expect(await l.call('a', 'read', 'k1', (op, arg) => (seen.push(`${op} ${arg}`), `v(${arg})`))).toEqual({ ok: 'v(k1)!' });
    expect(seen).toEqual(['get k1']);
  });

  it("a host function's failure reaches the guest as a HostError with its code", async () => {
    const l = lane();
    await l.load('a', `globalThis.f = () => { try { __host_call('x', '') } catch (e) { return e.name + ' ' + e.code + ' ' + e.message } }`, { hostCall: true });
    const failing = (): string => {
      throw Object.assign(new Error('no such record'), { code: 'not_found' });
    };
    expect(await l.call('a', 'f', '', failing)).toEqual({ ok: 'HostError not_found no such record' });
  });

  it('ends a loop of native work near its wall limit, and this thread runs meanwhile', async () => {
    const l = lane(600);
    await l.load('a', ECHO, { hostCall: true });
    await l.load('bad', `globalThis.spin = () => { for (;;) Array(1e6).fill(0); }`);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 20);
    const started = performance.now();
    const r = await l.call('bad', 'spin', '');
    const took = performance.now() - started;
    clearInterval(ticker);
    expect(r).toMatchObject({ error: { code: 'timeout' } });
    // Stopped by the interrupt at 600 ms or by the watchdog 150 ms later; generous on a busy machine.
    expect(took).toBeGreaterThanOrEqual(590);
    expect(took).toBeLessThan(600 + 150 + 1500);
    // This thread was never held: its timer kept ticking through the call.
    expect(ticks).toBeGreaterThan(10);
    // The sandbox came back with both scripts.
    expect(await l.call('a', 'echo', 'after')).toEqual({ ok: 'echo:after' });
    expect(await l.call('bad', 'spin', '')).toMatchObject({ error: { code: 'timeout' } });
  });

  it('a script whose top level never ends is refused, and the lane goes on', async () => {
    const l = lane(400);
    await l.load('a', ECHO);
    expect(await l.load('top', `for (;;) Array(1e6).fill(0);`)).toMatchObject({ error: { code: 'timeout' } });
    expect(await l.call('a', 'echo', 'y')).toEqual({ ok: 'echo:y' });
    expect(await l.call('top', 'x', '')).toMatchObject({ error: { code: 'load_error' } });
  });

  it('operations wait their turn and answer in order', async () => {
    const l = lane();
    await l.load('a', ECHO);
    const answers = await Promise.all(['1', '2', '3'].map((s) => l.call('a', 'echo', s)));
    expect(answers).toEqual([{ ok: 'echo:1' }, { ok: 'echo:2' }, { ok: 'echo:3' }]);
  });

  it('unload drops a script, also from a restarted sandbox', async () => {
    const l = lane(400);
    await l.load('a', ECHO);
    await l.load('bad', `globalThis.spin = () => { for (;;) Array(1e6).fill(0); }`);
    await l.unload('a');
    await l.call('bad', 'spin', '');
    expect(await l.call('a', 'echo', 'z')).toMatchObject({ error: { code: 'load_error' } });
  });

  it('a closed lane answers disposed', async () => {
    const l = lane();
    await l.load('a', ECHO);
    await l.close();
    expect(await l.call('a', 'echo', 'x')).toMatchObject({ error: { code: 'disposed' } });
  });
});

describe('SandboxLane after a call runs out of memory', () => {
  it('loads a 1.5 MB script after a call ran out of memory', async () => {
    const l = new SandboxLane({ name: 'oom lane', limits: { callMs: 5000 } });
    lanes.push(l);
    await l.load('bomb', `globalThis.grow = () => { const a = []; for (;;) a.push('x'.repeat(1 << 16) + a.length); }`);
    const out = await l.call('bomb', 'grow', '');
    expect('error' in out && out.error.code).toBe('out_of_memory');
    // A script of 1.6 MB of code, as a large twin's bundle is.
    const fns = Array.from({ length: 18000 }, (_, i) => `function f${i}(a, b) { return { id: 'x${i}', sum: a + b + ${i}, list: [a, b, ${i}] }; }`).join('\n');
    const big = `${fns}\nglobalThis.size = () => String(f17999(1, 2).sum);`;
    expect(big.length).toBeGreaterThan(1_500_000);
    expect(await l.load('big', big)).toEqual({ ok: '' });
    expect(await l.call('big', 'size', '')).toEqual({ ok: String(18002) });
  });
});
