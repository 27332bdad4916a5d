/**
 * Hostile code a world runs — a scenario script or a check that loops over native work, which
 * QuickJS's interrupts barely see — stalls nothing else: the twin's other requests, the same
 * world's other twins and another world served by the same process answer throughout, within a
 * latency bound, and the hostile call itself ends near its wall limit. Served as `kit world serve` serves worlds (LMDB
 * in a directory, the single-world server over sockets), with the world in the server's thread
 * (the default) and in a worker thread of its own. Needs `make build` (the workers run dist/).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSingleWorldServer, type SingleWorldServer } from '../../host/single-world.js';
import { openLocalWorld } from '../../runtime/runner/index.js';
import { DEFAULT_CALL_MS } from '../../runtime/sandbox/index.js';
import { buildGuestRuntime, loadBuiltinTwins } from '../../sdk/twin/build.js';

const TOKENS = { token: 'tok_hostile-stalls-write-0123456789abcdef', readToken: 'tok_r_hostile-stalls-read-0123456789abcdef' };
/** A bystander's slowest answer while the hostile code runs. Stalled, it would wait out the hostile call: 2.5 s or more. */
const BYSTANDER_BOUND_MS = 1000;
/** How long past its wall limit a hostile call may answer (the watchdog's grace, and a busy machine). */
const HOSTILE_SLACK_MS = 1500;
/** `for (;;) Array(1e6).fill(0)`: each turn is milliseconds of native work between two interpreter steps. */
const NATIVE_LOOP = 'for (;;) Array(1e6).fill(0);';

/** The world's token, and as the app's API key (as Stripe's SDK sends its key). */
const auth = { authorization: `Bearer ${TOKENS.token}`, 'x-kit-token': TOKENS.token };

async function serve(dir: string, world: string, vendors: string[], thread: 'main' | 'worker'): Promise<SingleWorldServer> {
  const builtins = await loadBuiltinTwins();
  const twins = vendors.map((v) => builtins.get(v)!);
  const handle = await openLocalWorld({ dir, org: 'local', world, twins, guestRuntime: await buildGuestRuntime(), thread });
  return startSingleWorldServer({ world: handle, org: 'local', worldName: world, tokens: TOKENS, twins: twins.map((t) => ({ vendor: t.vendor, requestScopes: t.manifest.requestScopes })) });
}

describe.each(['main', 'worker'] as const)('hostile code in a world served in its %s thread', (thread) => {
  let dir: string;
  let a: SingleWorldServer;
  let b: SingleWorldServer;
  let customer: string;
  let greeting: string;
  let ownGreeting: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kit-hostile-'));
    a = await serve(join(dir, 'a'), 'shop', ['hello', 'stripe'], thread);
    b = await serve(join(dir, 'b'), 'other', ['hello'], 'main');
    const made = await fetch(`${a.worldUrl}/stripe/v1/customers`, { method: 'POST', headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=Ada' });
    customer = ((await made.json()) as { id: string }).id;
    const greeted = await fetch(`${b.worldUrl}/hello/v1/greetings`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":"Grace"}' });
    greeting = ((await greeted.json()) as { id: string }).id;
    const own = await fetch(`${a.worldUrl}/hello/v1/greetings`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":"Ada"}' });
    ownGreeting = ((await own.json()) as { id: string }).id;
    const scenario = { handlers: [{ name: 'native-loop', match: { path: '/v1/heavy' }, js: NATIVE_LOOP }] };
    const put = await fetch(`${a.worldApi}/twins/hello/scenario`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(scenario) });
    expect(put.status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a scenario script looping over native work ends near its wall limit, as a 500 of the twin', async () => {
    const started = performance.now();
    const r = await fetch(`${a.worldUrl}/hello/v1/heavy`, { headers: auth });
    const took = performance.now() - started;
    expect(r.status).toBe(500);
    expect(JSON.stringify(await r.json())).toContain('handler_timeout');
    expect(took).toBeGreaterThanOrEqual(DEFAULT_CALL_MS - 50);
    expect(took).toBeLessThan(DEFAULT_CALL_MS + HOSTILE_SLACK_MS);
  }, 30_000);

  it("while three connections run it and a check loops at its top level, the twin's other requests, the other twin and the other world answer within the bound", async () => {
    let attacking = true;
    const hostile: number[] = [];
    const attackers = Array.from({ length: 3 }, async () => {
      while (attacking) hostile.push((await fetch(`${a.worldUrl}/hello/v1/heavy`, { headers: auth })).status);
    });
    const check = fetch(`${a.worldApi}/checks/spin`, { method: 'PUT', headers: { ...auth, 'content-type': 'text/javascript' }, body: `${NATIVE_LOOP}\nexport const check = { name: 'spin', run() { return true; } };` });

    const latencies: number[] = [];
    const statuses: number[] = [];
    const until = performance.now() + 2 * DEFAULT_CALL_MS + 1000;
    while (performance.now() < until) {
      for (const url of [`${a.worldUrl}/hello/v1/greetings/${ownGreeting}`, `${a.worldUrl}/stripe/v1/customers/${customer}`, `${b.worldUrl}/hello/v1/greetings/${greeting}`, `${a.worldApi}/clock`]) {
        const t = performance.now();
        const r = await fetch(url, { headers: auth });
        await r.arrayBuffer();
        latencies.push(performance.now() - t);
        statuses.push(r.status);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    attacking = false;
    const refused = await check;
    await Promise.all(attackers);

    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(latencies.length).toBeGreaterThan(30);
    expect(Math.max(...latencies)).toBeLessThan(BYSTANDER_BOUND_MS);
    expect(hostile.length).toBeGreaterThan(0);
    expect(hostile.every((s) => s === 500)).toBe(true);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'invalid_check', message: expect.stringContaining('time limit') });
    // The world goes on: its twin answers as before, and the check was not stored.
    expect((await fetch(`${a.worldUrl}/stripe/v1/customers/${customer}`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${a.worldApi}/checks/spin`, { headers: auth })).status).toBe(404);
  }, 60_000);
});
