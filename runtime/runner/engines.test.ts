/**
 * A world on the engines of a host without `node:vm`, worker threads or code generation (workerd),
 * made here as its build makes them: the built-in twins in realms from modules written with
 * `trustedModuleSource`, untrusted code in `InlineLane`s over a sandbox module whose glue comes
 * from a module written with `syncGlueSource`. It must answer as a world on Node's engines does.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadBuiltinTwins } from '../../sdk/twin/build.js';
import { openTestWorld, type TestWorld } from '../../test/helpers/world.js';
import { importEdgeSandboxModule, importTrustedRealms } from '../sandbox/fixtures/edge-modules.js';
import { edgeTrustedRealms } from '../sandbox/trusted-edge.js';
import { defaultGuestEngines, inlineGuestEngines, type GuestEngines } from './engines.js';
import { nodeGuestEngines } from './index.js';

const opened: TestWorld[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const w of opened.splice(0)) await w.close();
});

const VENDORS = ['hello', 'stripe', 'github'];

/** The edge's engines over the built-in twins: each bundle's realm module built first, as the edge build does. */
async function edgeEngines(): Promise<GuestEngines> {
  const builtins = await loadBuiltinTwins();
  const loaders = await importTrustedRealms([...builtins.values()].map((t) => t.source));
  return inlineGuestEngines(importEdgeSandboxModule(), edgeTrustedRealms(loaders));
}

async function world(engines?: GuestEngines, extra: Parameters<typeof openTestWorld>[0] = {}): Promise<TestWorld> {
  const w = await openTestWorld({ vendors: VENDORS, ...(engines ? { engines } : {}), ...extra });
  opened.push(w);
  return w;
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const STRIPE = { authorization: 'Bearer sk_test_edge', ...FORM };
type Step = [method: string, path: string, body?: unknown, headers?: Record<string, string>];

/** A session touching ids, the clock, lists, events, errors and each twin's error shape; ids come from earlier answers. */
function session(id: (name: string) => string): Step[] {
  return [
    ['POST', '/hello/v1/greetings', { name: 'Ada', metadata: { team: 'navy' } }],
    ['POST', '/hello/v1/greetings', 'name=Grace', FORM],
    ['GET', '/hello/v1/greetings?limit=1'],
    ['PATCH', `/hello/v1/greetings/${id('greeting')}`, { message: 'Hi' }],
    ['GET', '/hello/v1/greetings/grt_nope'],
    ['POST', '/stripe/v1/customers', 'email=ada%40example.com&name=Ada&metadata[tier]=gold', STRIPE],
    ['GET', `/stripe/v1/customers/${id('customer')}`, undefined, STRIPE],
    ['POST', `/stripe/v1/customers/${id('customer')}`, 'name=Ada+Lovelace', STRIPE],
    ['GET', '/stripe/v1/events?limit=3', undefined, STRIPE],
    ['POST', '/stripe/v1/payment_intents', 'amount=2000&currency=usd&payment_method=pm_card_visa&confirm=true&automatic_payment_methods[enabled]=true&automatic_payment_methods[allow_redirects]=never', STRIPE],
    ['GET', '/stripe/v1/customers/cus_nope', undefined, STRIPE],
    ['POST', '/github/admin/users', { login: 'octocat', email: 'octo@example.com' }, { 'x-kit-auth': 'authorization' }],
    ['GET', '/github/users/octocat'],
  ];
}

async function run(w: TestWorld): Promise<{ answers: string[]; logs: string[] }> {
  const ids = new Map<string, string>();
  const id = (name: string): string => ids.get(name) ?? 'missing';
  const answers: string[] = [];
  for (let i = 0; i < session(id).length; i++) {
    const [method, path, body, headers] = session(id)[i] as Step;
    const r = await w.vendor(method, path, body, headers);
    answers.push(`${method} ${path} → ${r.status} ${JSON.stringify(r.headers)} ${r.text}`);
    const made = (r.json as { id?: unknown; object?: unknown } | undefined) ?? {};
    if (typeof made.id === 'string' && made.object === 'greeting') ids.set('greeting', ids.get('greeting') ?? made.id);
    if (typeof made.id === 'string' && made.object === 'customer') ids.set('customer', ids.get('customer') ?? made.id);
  }
  // A month on: Stripe's timed moves and the clock, read through each realm's Date.
  answers.push((await w.api('PUT', '/clock', { at: '2026-01-01T00:00:00.000Z' })).text);
  answers.push((await w.api('POST', '/clock/advance', { by: '30d' })).text);
  answers.push((await w.vendor('GET', '/stripe/v1/events?limit=1', undefined, STRIPE)).text);
  const logs: string[] = [];
  for (const twin of VENDORS) logs.push((await w.api('GET', `/log/${twin}?limit=1000`)).text);
  return { answers, logs };
}

describe("the edge's engines", () => {
  it('are not the default on Node, whose are', () => {
    expect(defaultGuestEngines()).toBe(nodeGuestEngines);
  });

  it('answer the built-in twins byte for byte as node:vm contexts do, and write the same logs', async () => {
    const node = await run(await world());
    const edge = await run(await world(await edgeEngines()));
    // The session did reach every twin and made things (not a run of 404s).
    expect(node.answers.filter((a) => / → 200 /.test(a)).length).toBeGreaterThanOrEqual(9);
    expect(node.answers.find((a) => a.startsWith('POST /stripe/v1/payment_intents'))).toContain('"status":"succeeded"');
    expect(node.answers.at(-2)).toContain('2026-01-31T00:00:00.000Z');
    expect(edge.answers).toEqual(node.answers);
    expect(edge.logs).toEqual(node.logs);
  });

  it('keep two worlds of one isolate on their own clocks', async () => {
    const engines = await edgeEngines();
    const a = await world(engines, { world: 'a' });
    const b = await world(engines, { world: 'b' });
    await a.api('PUT', '/clock', { at: '2031-05-01T00:00:00.000Z' });
    const made: string[] = [];
    for (const w of [a, b, a, b]) made.push((await w.vendor('POST', '/stripe/v1/customers', 'email=x%40example.com', STRIPE)).json.created);
    expect(made).toEqual([Date.parse('2031-05-01T00:00:00.000Z') / 1000, Date.parse('2026-01-01T00:00:00.000Z') / 1000, Date.parse('2031-05-01T00:00:00.000Z') / 1000, Date.parse('2026-01-01T00:00:00.000Z') / 1000]);
  });

  it('run scenario js handlers and checks in the inline lane, and stop a runaway one by its steps', async () => {
    const w = await world(await edgeEngines(), { limits: { callSteps: 500, callMs: 60_000 } });
    const doc = {
      handlers: [
        { name: 'shout', match: { method: 'GET', path: '/v1/shout/:id' }, js: "const g = ctx.tree.get('greeting', request.params.id); return { status: 200, body: { loud: g.name.toUpperCase(), at: new Date().toISOString() } };" },
        { name: 'spin', match: { method: 'GET', path: '/v1/spin' }, js: 'for (;;) {}' },
      ],
    };
    expect((await w.api('PUT', '/twins/hello/scenario', doc)).status).toBe(200);
    const g = (await w.vendor('POST', '/hello/v1/greetings', { name: 'Ada' })).json;
    expect((await w.vendor('GET', `/hello/v1/shout/${g.id}`)).json).toEqual({ loud: 'ADA', at: '2026-01-01T00:00:00.000Z' });
    // The clock of a Worker does not move while it computes: the step budget stops the loop.
    const at = performance.now();
    vi.spyOn(performance, 'now').mockReturnValue(at);
    const spun = await w.vendor('GET', '/hello/v1/spin');
    vi.restoreAllMocks();
    expect(spun.status).toBeGreaterThanOrEqual(500);
    expect(spun.text).toContain('500 steps');

    const check = "export const check = { name: 'short names', run(entry) { return entry.writes.every((x) => x.type !== 'greeting' || x.value.name.length <= 5) || 'too long'; } };";
    expect((await w.api('PUT', '/checks/short', check, { 'content-type': 'text/javascript' })).json).toMatchObject({ name: 'short', declared: 'short names' });
    await w.vendor('POST', '/hello/v1/greetings', { name: 'Bartholomew' });
    expect(await w.runner.checks.run('hello', w.runner.world.entry('hello', 2)!)).toEqual([{ check: 'short', pass: false, failures: ['too long'] }]);
  });
});
