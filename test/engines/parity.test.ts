/**
 * The built-in twins run in V8 (runtime/sandbox/trusted.ts) for speed, and must still run in
 * QuickJS (a host that trusts no twin code, the edge variant). Both engines get the same
 * requests against fresh worlds and must answer the same bytes and write the same log.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openWorldRunner } from '../../runtime/runner/index.js';
import { MemoryStorage } from '../../runtime/store/index.js';
import { buildTwin } from '../../sdk/twin/build.js';
import { openTestWorld, type TestWorld } from '../helpers/world.js';

const opened: TestWorld[] = [];
afterEach(async () => {
  for (const w of opened.splice(0)) await w.close();
});

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const STRIPE = { authorization: 'Bearer sk_test_parity', ...FORM };
const ADMIN = { 'x-kit-auth': 'authorization' };

type Step = [method: string, path: string, body?: unknown, headers?: Record<string, string>];

/** A session touching ids, the clock, lists, events, errors and each twin's error shape. */
function session(ids: Map<string, string>): Step[] {
  const id = (name: string): string => ids.get(name) ?? 'missing';
  return [
    ['POST', '/hello/v1/greetings', { name: 'Ada', metadata: { team: 'navy' } }],
    ['POST', '/hello/v1/greetings', 'name=Grace', FORM],
    ['GET', '/hello/v1/greetings?limit=1'],
    ['GET', `/hello/v1/greetings/${id('greeting')}`],
    ['PATCH', `/hello/v1/greetings/${id('greeting')}`, { message: 'Hi' }],
    ['GET', '/hello/v1/greetings/grt_nope'],
    ['POST', '/hello/v1/greetings', { name: 42 }],
    ['POST', '/stripe/v1/customers', 'email=ada%40example.com&name=Ada&metadata[tier]=gold', STRIPE],
    ['POST', '/stripe/v1/customers', 'email=grace%40example.com', STRIPE],
    ['GET', `/stripe/v1/customers/${id('customer')}`, undefined, STRIPE],
    ['POST', `/stripe/v1/customers/${id('customer')}`, 'name=Ada+Lovelace', STRIPE],
    ['GET', '/stripe/v1/customers?limit=1', undefined, STRIPE],
    ['GET', '/stripe/v1/events?limit=3', undefined, STRIPE],
    ['POST', '/stripe/v1/payment_intents', 'amount=2000&currency=usd&payment_method=pm_card_visa&confirm=true&automatic_payment_methods[enabled]=true&automatic_payment_methods[allow_redirects]=never', STRIPE],
    ['GET', '/stripe/v1/customers/cus_nope', undefined, STRIPE],
    ['GET', '/stripe/v1/customers', undefined, { authorization: 'Bearer pk_test_wrong' }],
    ['DELETE', `/stripe/v1/customers/${id('customer')}`, undefined, STRIPE],
    ['POST', '/github/admin/users', { login: 'octocat', email: 'octo@example.com' }, ADMIN],
    ['GET', '/github/users/octocat'],
    ['GET', '/github/users/nobody'],
  ];
}

async function run(trustTwins: boolean): Promise<{ answers: string[]; logs: string[] }> {
  const world = await openTestWorld({ vendors: ['hello', 'stripe', 'github'], trustTwins });
  opened.push(world);
  const ids = new Map<string, string>();
  const answers: string[] = [];
  // The ids a step needs come from earlier answers, so the session is built as it goes.
  for (let i = 0; i < session(ids).length; i++) {
    const [method, path, body, headers] = session(ids)[i] as Step;
    const r = await world.vendor(method, path, body, headers);
    answers.push(`${method} ${path} → ${r.status} ${JSON.stringify(r.headers)} ${r.text}`);
    const made = (r.json as { id?: unknown; object?: unknown } | undefined) ?? {};
    if (typeof made.id === 'string' && made.object === 'greeting') ids.set('greeting', ids.get('greeting') ?? made.id);
    if (typeof made.id === 'string' && made.object === 'customer') ids.set('customer', ids.get('customer') ?? made.id);
  }
  const logs: string[] = [];
  for (const twin of ['hello', 'stripe', 'github']) logs.push((await world.api('GET', `/log/${twin}?limit=1000`)).text);
  return { answers, logs };
}

describe('built-in twins in V8 and in QuickJS', () => {
  it('answer the same bytes and write the same log', async () => {
    const v8 = await run(true);
    const quickjs = await run(false);
    // The session did reach every twin and made things (not a run of 404s).
    expect(v8.answers.filter((a) => / → 200 /.test(a)).length).toBeGreaterThanOrEqual(12);
    expect(v8.answers.some((a) => / → 40[0-4] /.test(a))).toBe(true);
    expect(v8.answers.find((a) => a.startsWith('POST /stripe/v1/payment_intents'))).toContain('"status":"succeeded"');
    expect(quickjs.answers).toEqual(v8.answers);
    expect(quickjs.logs).toEqual(v8.logs);
  });
});

type Runner = Awaited<ReturnType<typeof openWorldRunner>>;

/** A probe route's response of one shape: status, headers and body as the runner answers them. */
async function shape(runner: Runner, kind: string): Promise<string> {
  const r = await runner.handle({
    surface: 'vendor',
    method: 'POST',
    path: '/probe/shapes',
    query: '',
    headers: { 'content-type': 'application/json' },
    body: new TextEncoder().encode(JSON.stringify({ kind })),
    scope: 'write',
    requestId: 'r',
    receivedAt: 0,
  });
  return `${r.status} ${JSON.stringify(r.headers)} ${r.body instanceof Uint8Array ? `hex:${Buffer.from(r.body).toString('hex')}` : String(r.body ?? '')}`;
}

/** What the probe's `things` store answers (a store's response crosses as a route's does). */
async function storeAnswer(runner: Runner): Promise<string> {
  const r = await runner.handle({ surface: 'vendor', method: 'GET', path: '/probe/twin/store/things', query: '', headers: {}, scope: 'write', requestId: 'r', receivedAt: 0 });
  return `${r.status} ${JSON.stringify(r.headers)} ${String(r.body ?? '')}`;
}

/** A JSON POST to the probe twin: status and body. */
async function postProbe(runner: Runner, path: string, body: unknown): Promise<string> {
  const r = await runner.handle({
    surface: 'vendor',
    method: 'POST',
    path: `/probe${path}`,
    query: '',
    headers: { 'content-type': 'application/json' },
    body: new TextEncoder().encode(JSON.stringify(body)),
    scope: 'write',
    requestId: 'r',
    receivedAt: 0,
  });
  return `${r.status} ${String(r.body)}`;
}

const PROBE = fileURLToPath(new URL('../../sdk/twin/guest/fixtures/probe.ts', import.meta.url));

describe('the tree in both engines (values in V8, JSON text in QuickJS)', () => {
  it('merges buffered writes into gets, lists and counts the same way, and hands out fresh copies', async () => {
    const built = await buildTwin(PROBE);
    const session = async (trusted: boolean): Promise<string[]> => {
      const runner = await openWorldRunner({ storage: new MemoryStorage(), world: 'w', twins: [{ ...built, trusted }] });
      const post = (path: string, body: unknown): Promise<string> => postProbe(runner, path, body);
      const put = (id: string, value: unknown) => ({ op: 'put', type: 'thing', id, value });
      try {
        return [
          await post('/ops', { ops: ['a', 'b', 'c', 'd', 'e'].map((id) => put(id, { v: id })) }),
          await post('/ops', {
            ops: [
              { op: 'delete', type: 'thing', id: 'b' },
              put('bb', { v: 'new' }),
              put('c', { v: 'rewritten' }),
              { op: 'get', type: 'thing', id: 'b' },
              { op: 'get', type: 'thing', id: 'c' },
              { op: 'get', type: 'thing', id: 'nope' },
              { op: 'count', type: 'thing' },
              { op: 'list', type: 'thing', options: { limit: 3 } },
              { op: 'list', type: 'thing', options: { limit: 2, reverse: true, before: 'd' } },
              { op: 'delete', type: 'thing', id: 'nope' },
              { op: 'count', type: 'thing' },
            ],
          }),
          await post('/ops', { ops: [{ op: 'count', type: 'thing' }, { op: 'list', type: 'thing', options: { after: 'a' } }] }),
          await post('/mutate-committed', {}),
          await post('/mutate', {}),
          await post('/json-rules', {}),
          JSON.stringify(runner.world.log('probe').entries.at(-1)?.writes) + JSON.stringify(runner.world.log('probe').entries.at(-1)?.events),
          ...(await Promise.all(['text', 'base64', 'empty', 'null', 'json'].map((kind) => shape(runner, kind)))),
          await storeAnswer(runner),
        ];
      } finally {
        await runner.close();
      }
    };
    const v8 = await session(true);
    const rules = '{"when":"1970-01-01T00:00:00.000Z","numbers":[null,0,null,1e+21],"holes":[1,null,null,3],"nested":{"custom":"toJSON(custom)"}';
    expect(v8[5]).toBe(`200 {"1":"one","2":"two",${rules.slice(1)}}`);
    expect(v8[6]).toContain(`"value":{"1":"one","2":"two",${rules.slice(1)}}`);
    expect(v8[6]).toContain(`"data":{"1":"one","2":"two",${rules.slice(1)}}`);
    expect(v8[3]).toContain('"second":{"v":"a"}');
    expect(v8[3]).toContain('"again":{"items":[{"id":"a","value":{"v":"a"}}]');
    expect(v8.slice(7)).toEqual([
      '201 {"content-type":"text/plain","x-count":"3"} plain text',
      '200 {"content-type":"application/octet-stream"} hex:000102ff',
      '204 {} ',
      '200 {"content-type":"application/json"} null',
      '202 {"x-a":"b","content-type":"application/json"} {"ok":true,"list":[1,"two"]}',
      '200 {"content-type":"application/json"} {"items":[{"id":"a","value":{"v":"a"}},{"id":"bb","value":{"v":"new"}},{"id":"c","value":{"v":"rewritten"}},{"id":"d","value":{"v":"d"}},{"id":"e","value":{"v":"e"}},{"id":"m","value":{"n":1}},{"id":"rules","value":{"1":"one","2":"two","when":"1970-01-01T00:00:00.000Z","numbers":[null,0,null,1e+21],"holes":[1,null,null,3],"nested":{"custom":"toJSON(custom)"}}}],"hasMore":false}',
    ]);
    expect(await session(false)).toEqual(v8);
  });

  it('stores a write handed over as put stores it, copies made with copyJson and changed since included', async () => {
    const built = await buildTwin(PROBE);
    const session = async (trusted: boolean): Promise<string[]> => {
      const runner = await openWorldRunner({ storage: new MemoryStorage(), world: 'w', twins: [{ ...built, trusted }] });
      try {
        const answer = await postProbe(runner, '/hand-over', {});
        const stored = await runner.handle({ surface: 'vendor', method: 'GET', path: '/probe/twin/store/things', query: '', headers: {}, scope: 'write', requestId: 'r', receivedAt: 0 });
        const read = await runner.handle({ surface: 'vendor', method: 'GET', path: '/probe/hand-over', query: '', headers: {}, scope: 'write', requestId: 'r', receivedAt: 0 });
        return [answer, JSON.stringify(runner.world.log('probe').entries.at(-1)?.writes), String(stored.body), String(read.body)];
      } finally {
        await runner.close();
      }
    };
    const v8 = await session(true);
    const changed = '{"n":2,"list":[1,2,null,4],"numbers":[null,0],"when":"1970-01-01T00:00:00.000Z","nested":{"custom":"custom"}}';
    const kept = '{"n":1,"nested":{"list":[1,"two"]}}';
    expect(v8[0]).toBe(`200 {"record":{"s":1,"o":${kept}},"changed":${changed}}`);
    expect(v8[1]).toBe(
      `[{"type":"thing","id":"record","value":{"s":1,"o":${kept}}},{"type":"thing","id":"event","value":{"data":{"object":${kept}}}},` +
        `{"type":"thing","id":"changed","value":${changed}},{"type":"thing","id":"whole","value":{"n":3}},{"type":"thing","id":"snapshot","value":{"n":4}}]`,
    );
    expect(v8[2]).toContain(`{"id":"changed","value":${changed}}`);
    expect(JSON.parse(v8[3] as string)).toEqual({
      keys: ['n', 'list', 'numbers', 'when', 'nested'],
      kinds: ['number', 'array', 'array', 'string', 'object'],
      numbers: ['null', 'number'],
      list: ['number', 'number', 'null', 'number'],
      nested: ['custom'],
    });
    expect(await session(false)).toEqual(v8);
  });
});

describe('which engine runs a twin', () => {
  const which = async (trusted: boolean | undefined, trustTwins?: boolean): Promise<unknown> => {
    const built = await buildTwin(fileURLToPath(new URL('./fixtures/engine/index.ts', import.meta.url)));
    const bundle = trusted === undefined ? built : { ...built, trusted };
    const runner = await openWorldRunner({ storage: new MemoryStorage(), world: 'w', twins: [bundle], ...(trustTwins === undefined ? {} : { trustTwins }) });
    try {
      const r = await runner.handle({ surface: 'vendor', method: 'GET', path: '/engine/which', query: '', headers: {}, scope: 'write', requestId: 'r', receivedAt: 0 });
      return JSON.parse(String(r.body));
    } finally {
      await runner.close();
    }
  };

  it('a trusted bundle runs in V8; any other bundle, or any bundle when the runner trusts none, in QuickJS', async () => {
    expect(await which(true)).toEqual({ engine: 'v8' });
    expect(await which(undefined)).toEqual({ engine: 'quickjs' });
    expect(await which(false)).toEqual({ engine: 'quickjs' });
    expect(await which(true, false)).toEqual({ engine: 'quickjs' });
  });
});
