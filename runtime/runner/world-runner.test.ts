import { afterEach, describe, expect, it } from 'vitest';
import { openTestWorld, type TestWorld } from '../../test/helpers/world.js';
import { MAX_CHECKS } from './checks.js';

let world: TestWorld;
afterEach(async () => {
  await world?.close();
});

const TRACE = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('the vendor wire through the whole engine', () => {
  it('creates, reads, lists, updates and deletes a greeting, one log entry per write', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    const created = await world.vendor('POST', '/hello/v1/greetings', { name: 'Ada' });
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({ object: 'greeting', name: 'Ada', message: 'Hello, Ada!', created: 1767225600 });
    const id = created.json.id as string;
    expect(id).toMatch(/^grt_/);

    expect((await world.vendor('GET', `/hello/v1/greetings/${id}`)).json.name).toBe('Ada');
    // A form body reaches the handler parsed, like a JSON one.
    const form = await world.vendor('POST', '/hello/v1/greetings', 'name=Grace&metadata[team]=navy', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.json).toMatchObject({ name: 'Grace', metadata: { team: 'navy' } });
    const list = await world.vendor('GET', '/hello/v1/greetings?limit=1');
    expect(list.json.data.map((g: { name: string }) => g.name)).toEqual(['Grace']);
    expect(list.json.has_more).toBe(true);

    const updated = await world.vendor('PATCH', `/hello/v1/greetings/${id}`, { message: 'Hi' });
    expect(updated.json.message).toBe('Hi');
    expect((await world.vendor('DELETE', `/hello/v1/greetings/${id}`)).status).toBe(200);
    expect((await world.vendor('GET', `/hello/v1/greetings/${id}`)).status).toBe(404);

    const log = await world.api('GET', '/log/hello');
    expect(log.json.entries.map((e: { position: number; cause: { route: string } }) => [e.position, e.cause.route])).toEqual([
      [1, 'greetings.create'],
      [2, 'greetings.create'],
      [3, 'greetings.update'],
      [4, 'greetings.delete'],
    ]);
    // Reads append nothing.
    expect(world.runner.world.head('hello')).toBe(4);
  });

  it('answers the same requests with the same bytes in two fresh worlds', async () => {
    const run = async () => {
      const w = await openTestWorld({ vendors: ['hello'] });
      const out: string[] = [];
      for (const name of ['a', 'b', 'c']) out.push((await w.vendor('POST', '/hello/v1/greetings', { name })).text);
      out.push((await w.vendor('GET', '/hello/v1/greetings')).text);
      await w.close();
      return out;
    };
    const first = await run();
    const second = await run();
    expect(second).toEqual(first);
    world = await openTestWorld({ vendors: ['hello'] });
  });

  it('takes the literal route over a parameter whatever the declaration order', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    await world.vendor('POST', '/hello/v1/greetings', { name: 'Ada' });
    const search = await world.vendor('GET', '/hello/v1/greetings/search?q=Ada');
    expect(search.status).toBe(200);
    expect(search.json.data).toHaveLength(1);
  });

  it('writes nothing when a handler fails, and answers in the vendor error shape', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    const bad = await world.vendor('POST', '/hello/v1/greetings', { name: 'x', colour: 'red' });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ type: 'invalid_request_error', param: 'colour' });
    expect(world.runner.world.head('hello')).toBe(0);
    const broken = await world.vendor('POST', '/hello/v1/greetings', '{"name":', { 'content-type': 'application/json' });
    expect(broken.status).toBe(400);
    expect(broken.json.error.code).toBe('invalid_json');
  });

  it('refuses a form or JSON body that is not UTF-8 instead of handing the twin no parameters', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    const latin1 = Uint8Array.from([...Buffer.from('name='), 0xe9, ...Buffer.from('t'), 0xe9]);
    const form = await world.vendor('POST', '/hello/v1/greetings', latin1, { 'content-type': 'application/x-www-form-urlencoded' });
    expect([form.status, form.json.error.code]).toEqual([400, 'bad_request']);
    expect(form.json.error.message).toMatch(/not valid UTF-8/);
    const json = await world.vendor('POST', '/hello/v1/greetings', Uint8Array.from([0x7b, 0x22, 0xff, 0x22, 0x7d]), { 'content-type': 'application/json' });
    expect([json.status, json.json.error.code]).toEqual([400, 'invalid_json']);
    expect(world.runner.world.head('hello')).toBe(0);
    // The same name, percent-encoded as UTF-8, is taken.
    const ok = await world.vendor('POST', '/hello/v1/greetings', 'name=%C3%A9t%C3%A9', { 'content-type': 'application/x-www-form-urlencoded' });
    expect([ok.status, ok.json.name]).toEqual([200, 'été']);
  });

  it('records the traceparent and follows it in the timeline', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    await world.vendor('POST', '/hello/v1/greetings', { name: 'traced' }, { traceparent: TRACE });
    await world.vendor('POST', '/hello/v1/greetings', { name: 'untraced' });
    const timeline = await world.api('GET', `/timeline?trace=4bf92f3577b34da6a3ce929d0e0e4736`);
    expect(timeline.status).toBe(200);
    expect(timeline.json.entries).toHaveLength(1);
    expect(timeline.json.entries[0].entry.traceparent).toBe(TRACE);
  });

  it('pages the diff with limit and after, and refuses a bad cursor or limit', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    for (const name of ['a', 'b', 'c']) await world.vendor('POST', '/hello/v1/greetings', { name });
    const first = await world.api('GET', '/diff?limit=2');
    expect(first.status).toBe(200);
    expect(first.json.changes.map((c: { entry: { position: number } }) => c.entry.position)).toEqual([1, 2]);
    expect(typeof first.json.next).toBe('string');
    const second = await world.api('GET', `/diff?limit=2&after=${first.json.next}`);
    expect(second.json.changes.map((c: { entry: { position: number } }) => c.entry.position)).toEqual([3]);
    expect(second.json.next).toBeNull();
    const bad = await world.api('GET', '/diff?after=nope!');
    expect([bad.status, bad.json.error.code, bad.json.error.param]).toEqual([400, 'invalid_cursor', 'after']);
    expect((await world.api('GET', '/diff?limit=5000')).json.error.code).toBe('invalid_limit');
  });

  it('answers a malformed escape in the twin or store name with a 400, not a 500', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    for (const path of ['/%E0%A4%A/v1/x', '/hello/twin/store/%E0%A4%A']) {
      const res = await world.vendor('GET', path);
      expect([path, res.status, res.json.error.code]).toEqual([path, 400, 'bad_request']);
    }
  });

  it('answers 404 for a twin the world does not have and for a path no route takes', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    expect((await world.vendor('GET', '/nope/v1/x')).json.error.code).toBe('unknown_twin');
    const miss = await world.vendor('GET', '/hello/v2/greetings');
    expect(miss.status).toBe(404);
    expect(miss.json.error.code).toBe('no_handler');
  });
});

describe('the clock and timed moves', () => {
  it('expires a greeting when the clock passes its instant, in an entry stamped then', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    expect((await world.api('PUT', '/clock', { at: '2026-03-01T00:00:00Z' })).json).toEqual({ at: '2026-03-01T00:00:00.000Z', frozen: true });
    const g = (await world.vendor('POST', '/hello/v1/greetings', { name: 'brief', expires_in: 3600 })).json;
    expect(g.status).toBe('active');
    expect((await world.api('POST', '/clock/advance', { by: '2h' })).json.at).toBe('2026-03-01T02:00:00.000Z');
    const after = (await world.vendor('GET', `/hello/v1/greetings/${g.id}`)).json;
    expect(after.status).toBe('expired');
    const log = (await world.api('GET', '/log/hello')).json.entries;
    expect(log[1]).toMatchObject({ occurredAt: '2026-03-01T01:00:00.000Z', cause: { kind: 'move', move: 'expire' } });
    expect(log[1].events?.[0]?.type).toBe('greeting.expired');
  });

  it('performs each move once it falls due, however the reads and writes before it went (the runner remembers the next due instant)', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    await world.api('PUT', '/clock', { at: '2026-03-01T00:00:00Z' });
    const late = (await world.vendor('POST', '/hello/v1/greetings', { name: 'late', expires_in: 7200 })).json;
    // Reads before anything is due, and a write that schedules nothing.
    expect((await world.vendor('GET', `/hello/v1/greetings/${late.id}`)).json.status).toBe('active');
    const plain = (await world.vendor('POST', '/hello/v1/greetings', { name: 'plain' })).json;
    expect((await world.vendor('GET', `/hello/v1/greetings/${plain.id}`)).json.status).toBe('active');
    // A write that schedules a move earlier than the one known so far.
    const early = (await world.vendor('POST', '/hello/v1/greetings', { name: 'early', expires_in: 60 })).json;
    expect((await world.vendor('GET', `/hello/v1/greetings/${early.id}`)).json.status).toBe('active');

    await world.api('POST', '/clock/advance', { by: '30m' });
    expect((await world.vendor('GET', `/hello/v1/greetings/${early.id}`)).json.status).toBe('expired');
    expect((await world.vendor('GET', `/hello/v1/greetings/${late.id}`)).json.status).toBe('active');
    await world.api('POST', '/clock/advance', { by: '1h' });
    expect((await world.vendor('GET', `/hello/v1/greetings/${late.id}`)).json.status).toBe('active');
    await world.api('POST', '/clock/advance', { by: '31m' });
    expect((await world.vendor('GET', `/hello/v1/greetings/${late.id}`)).json.status).toBe('expired');
    expect((await world.vendor('GET', `/hello/v1/greetings/${plain.id}`)).json.status).toBe('active');
    const moves = (await world.api('GET', '/log/hello')).json.entries.filter((e: { cause: { kind: string } }) => e.cause.kind === 'move');
    expect(moves.map((e: { occurredAt: string }) => e.occurredAt)).toEqual(['2026-03-01T00:01:00.000Z', '2026-03-01T02:00:00.000Z']);
  });

  it('answers 503 catching_up while more moves fell due than one request performs, and the next requests go on until it is done', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    await world.api('PUT', '/clock', { at: '2026-03-01T00:00:00Z' });
    // More than one request performs (10,000 moves, or a second of them).
    const n = 10_050;
    for (let i = 0; i < n; i++) await world.vendor('POST', '/hello/v1/greetings', { name: `g${i}`, expires_in: 60 });
    await world.api('POST', '/clock/advance', { by: '2m' });
    const first = await world.vendor('GET', '/hello/v1/greetings?limit=1');
    expect(first.status).toBe(503);
    expect(first.headers['retry-after']).toBe('1');
    expect(first.json.error.code).toBe('catching_up');
    expect(first.json.error.message).toMatch(/^The world is performing the timed moves of 'hello' that fell due up to its clock: \d+ performed for this request, more remain\. Retry the request\.$/);
    let answered = first;
    for (let tries = 0; answered.status === 503 && tries < 50; tries++) answered = await world.vendor('GET', '/hello/v1/greetings?limit=1');
    expect(answered.status).toBe(200);
    // Every greeting expired, each in its own move entry: none was skipped or done twice.
    const moves = (await world.api('GET', '/map')).json.twins[0].position;
    expect(moves).toBe(2 * n);
    expect(answered.json.data[0].status).toBe('expired');
  }, 60_000);

  it('refuses to move the clock backward and to advance an unset clock', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    const unset = await world.api('POST', '/clock/advance', { by: '1h' });
    expect([unset.status, unset.json.error.code]).toEqual([409, 'clock_unset']);
    await world.api('PUT', '/clock', { at: '2026-03-01T00:00:00Z' });
    const back = await world.api('PUT', '/clock', { at: '2026-02-01T00:00:00Z' });
    expect([back.status, back.json.error.code]).toEqual([409, 'clock_backward']);
    expect((await world.api('PUT', '/clock', { at: 'yesterday' })).json.error.code).toBe('invalid_instant');
    expect((await world.api('POST', '/clock/advance', { by: '5 weeks' })).json.error.code).toBe('invalid_duration');
  });
});

describe('scenarios', () => {
  const declineOnce = `
handlers:
  - name: refuse-next
    match: { method: POST, path: /v1/greetings }
    times: 1
    respond:
      status: 402
      body: { error: { type: card_error, code: card_declined } }
`;

  it('answers from a scenario first, then falls back to the twin, and reports matches', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    const put = await world.api('PUT', '/twins/hello/scenario', declineOnce, { 'content-type': 'application/yaml' });
    expect(put.status).toBe(200);
    const first = await world.vendor('POST', '/hello/v1/greetings', { name: 'a' });
    expect([first.status, first.json.error.code]).toEqual([402, 'card_declined']);
    expect(world.runner.world.head('hello')).toBe(0);
    expect((await world.vendor('POST', '/hello/v1/greetings', { name: 'a' })).status).toBe(200);
    const report = (await world.vendor('GET', '/hello/twin/scenario')).json;
    expect(report.handlers[0]).toMatchObject({ name: 'refuse-next', matched: 1, remaining: 0 });
    // The document comes back as it was put.
    const got = await world.api('GET', '/twins/hello/scenario');
    expect(got.text).toBe(declineOnce);
  });

  it('refuses a bad document naming the handler and field, and keeps the one in force', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    await world.api('PUT', '/twins/hello/scenario', declineOnce, { 'content-type': 'application/yaml' });
    const bad = await world.api('PUT', '/twins/hello/scenario', 'handlers:\n  - name: x\n    match: { path: /v1/greetings }\n    respond: { status: 42 }\n', { 'content-type': 'application/yaml' });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('invalid_scenario');
    expect(bad.json.error.message).toMatch(/handlers\[0\].*status/);
    expect((await world.vendor('POST', '/hello/v1/greetings', { name: 'a' })).status).toBe(402);
  });

  it('runs a js handler in the sandbox with the twin API, and commits its writes of its own scenario.* records', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    const g = (await world.vendor('POST', '/hello/v1/greetings', { name: 'Ada' })).json;
    const doc = {
      handlers: [
        {
          name: 'shout',
          match: { method: 'GET', path: '/v1/shout/:id' },
          js: "const g = ctx.tree.get('greeting', request.params.id); ctx.tree.put('scenario.shout', request.params.id, { at: ctx.now() }); return { status: 200, body: { loud: g.name.toUpperCase(), at: new Date().toISOString() } };",
        },
      ],
    };
    expect((await world.api('PUT', '/twins/hello/scenario', doc)).status).toBe(200);
    const res = await world.vendor('GET', `/hello/v1/shout/${g.id}`);
    expect(res.json).toEqual({ loud: 'ADA', at: '2026-01-01T00:00:00.000Z' });
    expect(world.runner.world.getRecord('hello', 'scenario.shout', g.id)).toEqual({ at: '2026-01-01T00:00:00.000Z' });
  });

  it('keeps what a js handler that passes on wrote of its own, in an entry before the twin\'s', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    const doc = { handlers: [{ name: 'count', match: { method: 'POST', path: '/v1/greetings' }, js: "const n = (ctx.tree.get('scenario.calls', 'n') ?? { n: 0 }).n + 1; ctx.tree.put('scenario.calls', 'n', { n });" }] };
    expect((await world.api('PUT', '/twins/hello/scenario', doc)).status).toBe(200);
    for (const name of ['Ada', 'Bea']) expect((await world.vendor('POST', '/hello/v1/greetings', { name })).status).toBe(200);
    expect(world.runner.world.getRecord('hello', 'scenario.calls', 'n')).toEqual({ n: 2 });
    const log = world.runner.world.log('hello').entries.map((e) => (e.cause.kind === 'request' ? e.cause.route : e.cause.kind));
    expect(log).toEqual(['scenario count', 'greetings.create', 'scenario count', 'greetings.create']);
  });

  it("refuses a js handler that writes the twin's records or emits an event: a vendor-shaped 500 naming it, and nothing kept", async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    const g = (await world.vendor('POST', '/hello/v1/greetings', { name: 'Ada' })).json;
    const doc = {
      handlers: [
        { name: 'shout', match: { method: 'GET', path: '/v1/shout/:id' }, js: "ctx.tree.put('scenario.shout', request.params.id, { n: 1 }); ctx.tree.put('shout', request.params.id, { at: ctx.now() }); return { status: 200, body: {} };" },
        { name: 'rename', match: { method: 'POST', path: '/v1/greetings/:id' }, js: "ctx.tree.put('greeting', request.params.id, 'not a greeting');" },
        { name: 'notify', match: { method: 'POST', path: '/v1/notify' }, js: "ctx.emit('greeting.created', {}); return { status: 200, body: {} };" },
      ],
    };
    expect((await world.api('PUT', '/twins/hello/scenario', doc)).status).toBe(200);
    const head = world.runner.world.head('hello');
    const shout = await world.vendor('GET', `/hello/v1/shout/${g.id}`);
    expect(shout.status).toBe(500);
    // Hello's error shape (Stripe's): type, code, message.
    expect(shout.json.error).toMatchObject({ type: 'api_error', code: 'handler_error' });
    expect(shout.json.error.message).toContain(`Scenario handler "shout" wrote the twin's record (type "shout", id "${g.id}")`);
    // A handler that passes the request on to the twin is refused before the twin sees it.
    const rename = await world.vendor('POST', `/hello/v1/greetings/${g.id}`, { name: 'Bea' });
    expect([rename.status, rename.json.error.code]).toEqual([500, 'handler_error']);
    expect(rename.json.error.message).toContain('Scenario handler "rename" wrote the twin\'s record (type "greeting"');
    const notify = await world.vendor('POST', '/hello/v1/notify', {});
    expect([notify.status, notify.json.error.code]).toEqual([500, 'handler_error']);
    expect(notify.json.error.message).toContain('emitted the event "greeting.created"');
    expect(world.runner.world.head('hello')).toBe(head);
    expect(world.runner.world.getRecord('hello', 'scenario.shout', g.id)).toBeUndefined();
    expect((await world.vendor('GET', `/hello/v1/greetings/${g.id}`)).json).toMatchObject({ id: g.id, name: 'Ada' });
  });

  it("answers a js handler's throw in the twin's error shape, naming the handler and what it threw, and keeps nothing", async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    const doc = { handlers: [{ name: 'boom', match: { path: '/v1/boom' }, js: "ctx.tree.put('scenario.seen', 'x', { n: 1 }); throw new RangeError('out of widgets');" }] };
    expect((await world.api('PUT', '/twins/hello/scenario', doc)).status).toBe(200);
    const r = await world.vendor('GET', '/hello/v1/boom');
    expect(r.status).toBe(500);
    // Hello's error shape (Stripe's): type, code, message.
    expect(r.json.error).toMatchObject({ type: 'api_error', code: 'handler_error' });
    expect(r.json.error.message).toContain('Scenario handler "boom" threw: out of widgets');
    expect(world.runner.world.head('hello')).toBe(0);
  });

  it('keeps the js of the scenario in force when a replacement does not load', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    const good = { handlers: [{ name: 'hi', match: { path: '/v1/hi' }, js: "return { status: 200, body: { hi: true } };" }] };
    expect((await world.api('PUT', '/twins/hello/scenario', good)).status).toBe(200);
    const broken = { handlers: [{ name: 'bad', match: { path: '/v1/bad' }, js: 'return {' }] };
    const refused = await world.api('PUT', '/twins/hello/scenario', broken);
    expect([refused.status, refused.json.error.code]).toEqual([400, 'invalid_scenario']);
    expect((await world.vendor('GET', '/hello/v1/hi')).json).toEqual({ hi: true });
  });

  it('ends a runaway js handler with a 500 and keeps serving', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    const doc = { handlers: [{ name: 'spin', match: { path: '/v1/spin' }, js: 'for (;;) {}' }] };
    await world.api('PUT', '/twins/hello/scenario', doc);
    const spun = await world.vendor('GET', '/hello/v1/spin');
    expect(spun.status).toBe(500);
    // In the twin's own error shape (hello's is Stripe-like: type, code, message).
    expect(spun.json.error).toMatchObject({ type: 'api_error', code: 'handler_timeout' });
    expect((await world.vendor('POST', '/hello/v1/greetings', { name: 'still here' })).status).toBe(200);
  });

  it('lets a scenario be removed, and answers 404 when there is none', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    expect((await world.api('GET', '/twins/hello/scenario')).status).toBe(404);
    await world.api('PUT', '/twins/hello/scenario', declineOnce, { 'content-type': 'application/yaml' });
    expect((await world.api('DELETE', '/twins/hello/scenario')).status).toBe(204);
    expect((await world.vendor('POST', '/hello/v1/greetings', { name: 'a' })).status).toBe(200);
  });
});

describe('checks', () => {
  it('keeps at most MAX_CHECKS checks: one more is 409 too_many_checks, a stored one may still be replaced', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    const source = (n: number): string => `export const check = { name: 'c${n}', run() { return true; } };`;
    for (let i = 0; i < MAX_CHECKS; i++) expect((await world.api('PUT', `/checks/c${i}`, source(i), { 'content-type': 'text/javascript' })).status).toBe(200);
    const refused = await world.api('PUT', '/checks/one-more', source(-1), { 'content-type': 'text/javascript' });
    expect([refused.status, refused.json.error.code]).toEqual([409, 'too_many_checks']);
    expect((await world.api('PUT', '/checks/c0', source(0), { 'content-type': 'text/javascript' })).status).toBe(200);
    expect((await world.api('GET', '/checks')).json.checks).toHaveLength(MAX_CHECKS);
    expect((await world.api('DELETE', '/checks/c1')).status).toBe(204);
    expect((await world.api('PUT', '/checks/one-more', source(-1), { 'content-type': 'text/javascript' })).status).toBe(200);
  });


  it('gives each check its own memory: one that keeps 30 MB or 5 MB is refused, and many small ones are all kept and run', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    const put = (name: string, source: string) => world.api('PUT', `/checks/${name}`, source, { 'content-type': 'text/javascript' });
    const huge = await put('huge', "const t = Array(3e6).fill(0).map((_, i) => i * 1.5); export const check = { name: 'huge', run() { return t.length > 0; } };");
    expect([huge.status, huge.json.error.code]).toEqual([400, 'invalid_check']);
    expect(huge.json.error.message).toContain('out of memory');
    const big = await put('big', "const t = Array(150000).fill(0).map((_, i) => 'k' + i); export const check = { name: 'big', run() { return t.length > 0; } };");
    expect([big.status, big.json.error.code]).toEqual([400, 'invalid_check']);
    expect(big.json.error.message).toMatch(/keeps \d+\.\d MiB once loaded; a check may keep at most 1 MiB/);
    // Before, one check could hold most of the world's sandbox and the next was refused for it.
    for (let i = 0; i < 20; i++) {
      const r = await put(`small${i}`, `const t = Array(20000).fill(0).map((_, i) => 'k' + i); export const check = { name: 'small${i}', run(entry) { const burst = Array(100000).fill(0).map((_, i) => 'b' + i); return burst.length > 0 && t.length > 0; } };`);
      expect(r.status).toBe(200);
    }
    await world.vendor('POST', '/hello/v1/greetings', { name: 'Ada' });
    const results = await world.runner.checks.run('hello', world.runner.world.entry('hello', 1)!);
    expect(results).toHaveLength(20);
    expect(results.every((r) => r.pass)).toBe(true);
  });

  it('a check whose run loops over native work fails near its time limit, and the checks after it still run', async () => {
    world = await openTestWorld({ vendors: ['hello'], limits: { callMs: 500 } });
    const put = (name: string, source: string) => world.api('PUT', `/checks/${name}`, source, { 'content-type': 'text/javascript' });
    expect((await put('a-spin', "export const check = { name: 'spin', run() { for (;;) Array(1e6).fill(0); } };")).status).toBe(200);
    expect((await put('b-fine', "export const check = { name: 'fine', run() { return true; } };")).status).toBe(200);
    await world.vendor('POST', '/hello/v1/greetings', { name: 'Ada' });
    const started = performance.now();
    const results = await world.runner.checks.run('hello', world.runner.world.entry('hello', 1)!);
    expect(performance.now() - started).toBeLessThan(500 + 2000);
    expect(results).toEqual([
      { check: 'a-spin', pass: false, failures: [expect.stringContaining('time limit of 500 ms')] },
      { check: 'b-fine', pass: true, failures: [] },
    ]);
  });

  it('stores a check, refuses one that exports none, and runs it over an entry', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    const source = `export const check = { name: 'names are short', run(entry, tree) {
      const long = entry.writes.filter((w) => w.type === 'greeting' && w.value && w.value.name.length > 5);
      return long.length ? long.map((w) => 'too long: ' + w.value.name) : true;
    } };`;
    expect((await world.api('PUT', '/checks/short-names', source, { 'content-type': 'text/javascript' })).json).toMatchObject({ name: 'short-names', declared: 'names are short' });
    const refused = await world.api('PUT', '/checks/nothing', 'export const x = 1;', { 'content-type': 'text/javascript' });
    expect([refused.status, refused.json.error.code]).toEqual([400, 'invalid_check']);
    expect((await world.api('GET', '/checks')).json.checks.map((c: { name: string }) => c.name)).toEqual(['short-names']);

    await world.vendor('POST', '/hello/v1/greetings', { name: 'Bartholomew' });
    const entry = world.runner.world.entry('hello', 1)!;
    expect(await world.runner.checks.run('hello', entry)).toEqual([{ check: 'short-names', pass: false, failures: ['too long: Bartholomew'] }]);
    expect((await world.api('DELETE', '/checks/short-names')).status).toBe(204);
    expect((await world.api('GET', '/checks/short-names')).status).toBe(404);
  });
});

describe('the world API', () => {
  it('answers the twin manifest, its store, the map, status and the request report', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    await world.vendor('POST', '/hello/v1/greetings', { name: 'Ada' });
    await world.vendor('GET', '/hello/v1/greetings/grt_missing');
    const manifest = (await world.vendor('GET', '/hello/twin')).json;
    expect(manifest).toMatchObject({ vendor: 'hello', protocol: 'http', root: null, stores: ['greetings'] });
    expect(manifest.matchers.map((m: { name: string }) => m.name)).toContain('greetings.search');
    expect((await world.vendor('GET', '/hello/twin/store/greetings')).status).toBe(200);
    expect((await world.vendor('GET', '/hello/twin/store/nope')).json.error.code).toBe('unknown_store');
    const map = (await world.api('GET', '/map')).json;
    expect(map.twins[0]).toMatchObject({ twin: 'hello', position: 1 });
    expect((await world.api('GET', '/twins/hello/status')).json).toMatchObject({ vendor: 'hello', position: 1, protocol: 'http' });
    const report = (await world.api('GET', '/requests')).json;
    expect(report.twins[0]).toMatchObject({ twin: 'hello', total: 5, byStatusClass: { '2xx': 3, '4xx': 2 } });
    expect(report.twins[0].topRoutes).toContainEqual({ route: 'greetings.create', count: 1 });
    expect(report.twins[0].topRoutes).toContainEqual({ route: 'greetings.retrieve', count: 1 });
    expect(report.twins[0].p50Ms).toBeGreaterThan(0);
  });

  it('gives every bad input a clear 4xx, never a 500', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    const cases: [string, string, unknown, Record<string, string> | undefined, number, string][] = [
      ['PUT', '/clock', '{"at":', { 'content-type': 'application/json' }, 400, 'invalid_json'],
      ['PUT', '/clock', 'at=now', { 'content-type': 'application/x-www-form-urlencoded' }, 415, 'unsupported_media_type'],
      ['GET', '/nowhere', undefined, undefined, 404, 'not_found'],
      ['DELETE', '/map', undefined, undefined, 405, 'method_not_allowed'],
      ['GET', '/log/nope', undefined, undefined, 404, 'unknown_twin'],
      ['GET', '/log/hello?after=-1', undefined, undefined, 400, 'invalid_position'],
      ['GET', '/checkpoint/hello?at=99', undefined, undefined, 404, 'position_beyond_head'],
      ['GET', '/history?at=tuesday', undefined, undefined, 400, 'invalid_instant'],
      ['GET', '/timeline?before=garbage', undefined, undefined, 400, 'invalid_cursor'],
      ['GET', '/branches', undefined, undefined, 404, 'not_found'],
      ['GET', '/requests?hours=-3', undefined, undefined, 400, 'bad_request'],
    ];
    for (const [method, path, body, headers, status, code] of cases) {
      const res = await world.api(method, path, body, headers);
      expect([path, res.status, res.json?.error?.code]).toEqual([path, status, code]);
    }
  });

  it('cuts history at an instant and answers a checkpoint as of a position', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    await world.api('PUT', '/clock', { at: '2026-03-01T00:00:00Z' });
    await world.vendor('POST', '/hello/v1/greetings', { name: 'one' });
    await world.api('POST', '/clock/advance', { by: '1d' });
    await world.vendor('POST', '/hello/v1/greetings', { name: 'two' });
    const cut = (await world.api('GET', '/history?at=2026-03-01T12:00:00Z')).json;
    expect(cut.views.hello.position).toBe(1);
    const checkpoint = (await world.api('GET', '/checkpoint/hello?at=1')).json;
    expect(Object.values(checkpoint.records.greeting).map((g) => (g as { name: string }).name)).toEqual(['one']);
  });
});

describe('hostile guests', () => {
  it('answers a scenario js handler that returns a Promise or a function with handler_error naming it, not an empty 200', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    const doc = {
      handlers: [
        { name: 'async', match: { path: '/v1/async' }, js: 'return Promise.resolve({ status: 201 });' },
        { name: 'fn', match: { path: '/v1/fn' }, js: 'return function () { return 1; };' },
      ],
    };
    expect((await world.api('PUT', '/twins/hello/scenario', doc)).status).toBe(200);
    for (const [path, what] of [['/hello/v1/async', 'a Promise'], ['/hello/v1/fn', 'a function']] as const) {
      const res = await world.vendor('GET', path);
      expect([path, res.status, res.json.error.code]).toEqual([path, 500, 'handler_error']);
      expect(res.json.error.message).toContain(`returned ${what}`);
    }
  });

  it('refuses the writes of a scenario script that forges the guest protocol', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    // The js handler redefines the protocol function, then answers through it next time.
    const doc = {
      handlers: [
        {
          name: 'forge',
          match: { path: '/v1/forge' },
          js: "globalThis.__kit_invoke = () => JSON.stringify({ response: { status: 200 }, writes: [{ type: 42 }], events: 'nope' }); return { status: 200, body: {} };",
        },
      ],
    };
    await world.api('PUT', '/twins/hello/scenario', doc);
    expect((await world.vendor('GET', '/hello/v1/forge')).status).toBe(200);
    const forged = await world.vendor('GET', '/hello/v1/forge');
    expect([forged.status, forged.json.error.code]).toEqual([500, 'handler_error']);
    expect(world.runner.world.head('hello')).toBe(0);
  });
});
