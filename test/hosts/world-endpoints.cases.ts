/**
 * The world endpoints as every host answers them (spec: world-and-twin-api.md, What the service
 * does 7: "all answering the same world endpoints"). One list of cases; each host's test file
 * builds its fixture (fixture.ts) and calls `runWorldEndpointCases`. A case a host cannot run
 * is skipped with the reason in its name: what the host lacks (`HostLacks`), or the host's own
 * `skip` list (each entry naming a known bug).
 *
 * Every request goes over the host's socket to the real runtime world with the built-in twins
 * (fixture.ts `FIXTURE_VENDORS`): what a client of that host would see. hello is the plain twin;
 * stripe shows what the host tells a twin (the token came as its API key: its default account);
 * github enforces the read scope itself and writes links under the address the client used;
 * smtp is reached through a stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import WebSocket from 'ws';
import { answeredByTwin, api, at, bearer, createGreeting, expectAnswered, expectRefused, kit, makeBranch, setClock, vendor } from './calls.js';
import { worldsSideBySideCases } from './admin.cases.js';
import { browserAccessCases } from './browser-access.cases.js';
import { rootsCases } from './roots.cases.js';
import { changesetsCases } from './changesets.cases.js';
import { CREDENTIAL_FORMS, VENDOR_METHODS, WORLD_ENDPOINTS } from './endpoints.js';
import { errorCode, FIXTURE_VENDORS, send, type Answer, type HostFixture, type HostFixtureSpec, type HostLacks, type HostWorld } from './fixture.js';

const WRONG = 'tok_not-this-worlds-token-0123456789abcdef';
/** `x-kit-world-code` of a world: the kit's version and a hash of its twins' code. */
const WORLD_CODE = /^[0-9A-Za-z.-]+\+[0-9a-f]{12}$/;
const MAX_BODY = 4 * 1024 * 1024;
const T0 = '2030-01-01T00:00:00.000Z';

export function runWorldEndpointCases(spec: HostFixtureSpec): void {
  const lacks = spec.lacks;
  const skipped = new Map<string, string>();
  for (const s of spec.skip ?? []) for (const c of s.cases) skipped.set(c, s.reason);
  const listed = new Set<string>();
  let host: HostFixture;
  let groupName = '';

  /** A case; skipped with its reason where the host lacks what it needs or names it in `skip`. */
  const test = (name: string, run: () => Promise<void>, needs: (keyof HostLacks)[] = [], timeoutMs?: number): void => {
    const full = `${groupName} > ${name}`;
    listed.add(full);
    const lack = needs.find((n) => lacks[n] !== undefined);
    const reason = lack !== undefined ? lacks[lack] : skipped.get(full);
    if (reason !== undefined) it.skip(`${name} [skipped on ${spec.name}: ${reason}]`, run);
    else it(name, run, timeoutMs);
  };
  const group = (name: string, body: () => void): void => {
    describe(name, () => {
      groupName = name;
      body();
    });
  };
  /** A world the group's cases share (opened once, before its first case). */
  const sharedWorld = (): (() => HostWorld) => {
    let w: HostWorld | undefined;
    beforeAll(async () => {
      w = await host.openWorld();
    });
    return () => w!;
  };

  describe(`world endpoints on ${spec.name}`, () => {
    beforeAll(async () => {
      // A skip that names no case would silently skip nothing.
      const unknown = [...skipped.keys()].filter((c) => !listed.has(c));
      if (unknown.length > 0) throw new Error(`${spec.name} skips cases that do not exist: ${unknown.join('; ')}`);
      host = await spec.start();
    }, 60_000);
    afterAll(async () => {
      await host?.close();
    });

    group('authentication: world endpoints', () => {
      const shared = sharedWorld();
      for (const e of WORLD_ENDPOINTS) {
        test(`${e.method} …${e.path}`, async () => {
          const w = shared();
          const opened = e.branches !== undefined && lacks.branches === undefined ? e.branches : e.answer;
          const body = e.method === 'GET' || e.method === 'DELETE' ? undefined : '{}';
          const ask = (headers: Record<string, string>) =>
            send(e.method, `${w.api}${e.path}`, { headers: { 'content-type': 'application/json', ...headers }, ...(body !== undefined ? { body } : {}) });

          const none = await ask({});
          expectRefused(none, 401, 'unauthenticated');
          expect(none.headers['www-authenticate']).toMatch(/^Bearer realm=/);
          expectRefused(await ask(kit(WRONG)), 401, 'unauthenticated');
          // The world API reads x-kit-token, and x-twins-key from an attached app (Authentication 3);
          // an Authorization header is the vendor's and never opens it.
          expectRefused(await ask(bearer(w.token)), 401, 'unauthenticated');
          expectAnswered(await ask({ 'x-twins-key': w.token }), opened, 'x-twins-key');
          const read = await ask(kit(w.readToken));
          if (e.read) expectAnswered(read, opened, 'read token');
          else expectRefused(read, 403, 'forbidden', 'read token');
          const full = await ask(kit(w.token));
          expectAnswered(full, opened, 'token');
          for (const a of [none, read, full]) expect(a.headers['x-kit-world-code']).toMatch(WORLD_CODE);
          expect(new Set([none, read, full].map((a) => a.headers['x-kit-world-code'])).size).toBe(1);
        });
      }

      test('a HEAD on a read endpoint is opened by the read token like its GET', async () => {
        const a = await send('HEAD', `${shared().api}/map`, { headers: kit(shared().readToken) });
        expect([a.status, a.text]).toEqual([200, '']);
      });

      test('…/twins/<vendor>/status is not a read endpoint though …/twins is', async () => {
        const w = shared();
        for (const [path, status] of [['/twins', 200], ['/twins/', 200], ['/twins/hello', 403], ['/twins/hello/status', 403]] as const) {
          expect([path, (await api(w, 'GET', path, undefined, w.readToken)).status]).toEqual([path, status]);
        }
      });

      test('a token of another length or a huge header is refused, not crashed on', async () => {
        const w = shared();
        for (const t of ['', 'x', w.token.slice(0, -1), `${w.token}x`, 'a'.repeat(5000), `${w.readToken} `]) {
          const a = await api(w, 'GET', '/map', undefined, t);
          // Trailing blanks of a header value are not part of it (RFC 9110 5.5): that one opens as the read token.
          expect([t.slice(0, 20), a.status]).toEqual([t.slice(0, 20), t === `${w.readToken} ` ? 200 : 401]);
        }
      });
    });

    group('authentication: the vendor wire', () => {
      const shared = sharedWorld();
      for (const form of CREDENTIAL_FORMS) {
        for (const method of VENDOR_METHODS) {
          test(`${form.name} × ${method}`, async () => {
            const w = shared();
            const reads = method === 'GET' || method === 'HEAD';
            const hello = (token: string | null) =>
              send(method, `${w.url}/hello/v1/greetings${reads ? '?limit=1' : ''}`, { headers: token === null ? {} : form.headers(token), ...(method === 'POST' ? { body: { name: 'Ada' } } : {}) });
            const before = await answeredByTwin(w);

            const full = await hello(w.token);
            // hello answers its list and its create, and its own 404 for what it has no route for.
            expect(full.status).toBe(reads || method === 'POST' ? 200 : 404);
            if (method === 'HEAD') expect(full.text).toBe('');
            else expect(full.json()).toMatchObject(reads ? { object: 'list' } : method === 'POST' ? { object: 'greeting', name: 'Ada' } : { error: { code: 'no_handler' } });
            const read = await hello(w.readToken);
            if (reads) expect(read.status).toBe(200);
            else expectRefused(read, 403, 'read_only');

            const wrong = await hello(WRONG);
            expect(wrong.status).toBe(401);
            if (method !== 'HEAD') expect(errorCode(wrong)).toBe('unauthenticated');
            expect(wrong.headers['www-authenticate']).toContain('Basic realm=');
            expect((await hello(null)).status).toBe(401);

            // github enforces the read scope itself: the read token's every request reaches it, a
            // write marked so that github refuses it in its own words.
            const github = await send(method, `${w.url}/github/user/repos`, { headers: form.headers(w.readToken), ...(method === 'POST' ? { body: { name: 'never-made' } } : {}) });
            // Its own answer: a list, or a refusal in GitHub's shape (never the host's `read_only`).
            if (method !== 'HEAD' && github.status === 200) expect(Array.isArray(github.json())).toBe(true);
            else if (method !== 'HEAD') expect(github.json()).toEqual({ message: expect.any(String), documentation_url: expect.any(String), status: String(github.status) });
            if (method === 'POST' && form.viaAuthorization) expect([github.status, github.json().message]).toEqual([403, expect.stringContaining('read-only')]);

            const after = await answeredByTwin(w);
            expect(after['hello']! - before['hello']!).toBe(reads ? 2 : 1);
            expect(after['github']! - before['github']!).toBe(1);
          });
        }

        test(`${form.name}: the twin is told whether the token came as the vendor's API key`, async () => {
          const w = shared();
          // Stripe opens its default account for the world's token as the API key; without one it is Stripe's 401.
          for (const token of [w.token, w.readToken]) {
            const a = await send('GET', `${w.url}/stripe/v1/customers`, { headers: form.headers(token) });
            if (form.viaAuthorization) expect([a.status, a.json().object]).toEqual([200, 'list']);
            else expect([a.status, a.json().error.message]).toEqual([401, expect.stringContaining('You did not provide an API key')]);
          }
        });
      }

      test("with x-twins-key the app's own Authorization reaches the twin untouched", async () => {
        const w = shared();
        const appKey = { 'x-twins-key': w.token, authorization: 'Bearer sk_test_appKeyOfItsOwn01' };
        const made = await vendor(w, 'POST', '/stripe/v1/customers', 'name=Own', { ...appKey, 'content-type': 'application/x-www-form-urlencoded' });
        expect(made.status).toBe(200);
        const id = (made.json() as { id: string }).id;
        const ids = async (headers: Record<string, string>) => ((await vendor(w, 'GET', '/stripe/v1/customers', undefined, headers)).json() as { data: { id: string }[] }).data.map((c) => c.id);
        // The app key's own account has it; the account the world's token opens does not.
        expect(await ids(appKey)).toContain(id);
        expect(await ids(bearer(w.token))).not.toContain(id);
        // The app's key may itself be the world's token, in any form: the twin is told so.
        expect(await ids({ 'x-twins-key': w.token, authorization: `Bearer ${w.token}` })).not.toContain(id);
        expect((await vendor(w, 'GET', '/stripe/v1/customers', undefined, { 'x-twins-key': w.token, authorization: `Basic ${Buffer.from(`${w.readToken}:`).toString('base64')}` })).status).toBe(200);
      });

      test('a vendor key in Authorization without the world token is refused', async () => {
        const w = shared();
        for (const authorization of ['Bearer sk_test_vendor_key', 'AWS4-HMAC-SHA256 Credential=x', 'Basic !!!not-base64']) {
          expectRefused(await vendor(w, 'GET', '/hello/v1/greetings', undefined, { authorization }), 401, 'unauthenticated', authorization);
        }
      });

      test('a client cannot forge the headers the host sets', async () => {
        const w = shared();
        // x-kit-auth: without the token in Authorization, stripe is not told it came as the API key.
        const forgedAuth = await vendor(w, 'GET', '/stripe/v1/customers', undefined, { 'x-twins-key': w.token, 'x-kit-auth': 'authorization' });
        expect([forgedAuth.status, forgedAuth.json().error.message]).toEqual([401, expect.stringContaining('You did not provide an API key')]);
        // x-kit-read-only: the world's token still writes at github.
        const forgedReadOnly = await vendor(w, 'POST', '/github/user/repos', { name: 'made-anyway' }, { ...bearer(w.token), 'x-kit-read-only': '1' });
        expect(forgedReadOnly.status).toBe(201);
        // x-kit-twin-url: github's links name where the client addressed the twin, never a forged address.
        await vendor(w, 'POST', '/github/user/repos', { name: 'made-too' });
        const forgedUrl = await vendor(w, 'GET', '/github/user/repos?per_page=1', undefined, { ...bearer(w.token), 'x-kit-twin-url': 'https://evil.example' });
        expect(forgedUrl.headers['link']).toContain(`<${w.url}/github/user/repos?`);
        expect(forgedUrl.headers['link']).not.toContain('evil.example');
      });

      test('tells the twin where the client addressed it: the Host it sent, else the published address', async () => {
        const w = shared();
        for (const name of ['links-a', 'links-b']) await vendor(w, 'POST', '/github/user/repos', { name });
        const port = new URL(w.base).port;
        const linkBase = async (path: string, host?: string): Promise<string> => {
          const a = await send('GET', `${w.base}${path}`, { headers: { ...bearer(w.token), ...(host !== undefined ? { host } : {}) } });
          const link = /<([^>]*)>/.exec(a.headers['link'] ?? '')?.[1] ?? `no link: ${a.status}`;
          return link.slice(0, link.indexOf('/user/repos?'));
        };
        const twin = `/${w.name}/github`;
        expect(await linkBase(`${twin}/user/repos?per_page=1`, `localhost:${port}`)).toBe(`http://localhost:${port}${twin}`);
        expect(await linkBase(`${twin}/user/repos?per_page=1`, `${w.world}--${w.org}.localhost:${port}`)).toBe(`http://${w.world}--${w.org}.localhost:${port}${twin}`);
        // The vendor segment as the client wrote it, doubled slashes folded as routing folds them.
        expect(await linkBase(`/${w.name}//github/user/repos?per_page=1`, `localhost:${port}`)).toBe(`http://localhost:${port}${twin}`);
        expect(await linkBase(`${twin}/user/repos?per_page=1`, `[::1]:${port}`)).toBe(`http://[::1]:${port}${twin}`);
        // A Host that is no URL authority is not echoed into the twin's links.
        for (const forged of ['evil.example/path', '"><x>', 'h:99999999', 'a b', '']) {
          expect([forged, await linkBase(`${twin}/user/repos?per_page=1`, forged)]).toEqual([forged, `${w.url}/github`]);
        }
      });

      test("the twin's own endpoints and the attach manifest open to the read token", async () => {
        const w = shared();
        for (const p of ['/hello/twin', '/hello/twin/scenario', '/hello/twin/store/greetings', '/.well-known/kit-world']) {
          expect([p, (await vendor(w, 'GET', p, undefined, kit(w.readToken))).status]).toEqual([p, 200]);
          expect([p, (await vendor(w, 'GET', p, undefined, {})).status]).toEqual([p, 401]);
        }
      });

      test('the attach manifest names the token presented, never another', async () => {
        const w = shared();
        for (const token of [w.token, w.readToken]) {
          const m = (await vendor(w, 'GET', '/.well-known/kit-world', undefined, kit(token))).json();
          expect(m).toMatchObject({
            name: w.world,
            vendors: { github: `${w.url}/github`, hello: `${w.url}/hello`, stripe: `${w.url}/stripe` },
            env: { KIT_TWINS_KEY: token, HELLO_API_URL: `${w.url}/hello` },
          });
          expect(JSON.stringify(m)).not.toContain(token === w.token ? w.readToken : w.token);
        }
        expect((await vendor(w, 'POST', '/.well-known/kit-world', '{}', kit(w.token))).status).toBe(405);
      });

      test('a vendor the world does not serve refuses the read token its writes (it names no read scope)', async () => {
        const w = shared();
        expectRefused(await vendor(w, 'POST', '/nosuch/x', '{}', kit(w.readToken)), 403, 'read_only');
      });

      test("the read token's refused write never reaches the twin", async () => {
        const w = shared();
        const position = async () => ((await api(w, 'GET', '/map')).json() as { twins: { twin: string; position: number }[] }).twins.find((t) => t.twin === 'hello')!.position;
        const before = await position();
        expectRefused(await vendor(w, 'POST', '/hello/v1/greetings', { name: 'Mallory' }, bearer(w.readToken)), 403, 'read_only');
        expect(await position()).toBe(before);
      });
    });

    group('looking into a world', () => {
      test('the clock: unset, set, advanced, never backward', async () => {
        const w = await host.openWorld();
        const unset = (await api(w, 'GET', '/clock', undefined, w.readToken)).json() as { at: string; frozen: boolean };
        expect(unset.frozen).toBe(false);
        expect(Math.abs(Date.parse(unset.at) - Date.now())).toBeLessThan(60_000);
        expectRefused(await api(w, 'POST', '/clock/advance', { by: '1h' }), 409, 'clock_unset');
        await setClock(w, T0);
        expect((await api(w, 'POST', '/clock/advance', { by: '90m' })).json()).toEqual({ at: at(T0, 90 * 60_000), frozen: true });
        expectRefused(await api(w, 'PUT', '/clock', { at: T0 }), 409, 'clock_backward');
        expectRefused(await api(w, 'POST', '/clock/advance', { by: '-1h' }), 400, 'invalid_duration');
        expectRefused(await api(w, 'PUT', '/clock', { at: 'nope' }), 400, 'invalid_instant');
        expectRefused(await api(w, 'PUT', '/clock', { at: at(T0, 86_400_000) }, w.readToken), 403, 'forbidden');
        // Malformed JSON is the caller's mistake, never a 500.
        expectRefused(await api(w, 'PUT', '/clock', '{"at": ', w.token, { 'content-type': 'application/json' }), 400, 'invalid_json');
        expect((await api(w, 'GET', '/clock/', undefined, w.readToken)).json()).toEqual({ at: at(T0, 90 * 60_000), frozen: true });
      });

      test('map, timeline, log, diff, history and checkpoint after a Stripe create and a hello create', async () => {
        const w = await host.openWorld();
        await setClock(w, T0);
        const customer = await vendor(w, 'POST', '/stripe/v1/customers', 'name=Ada', { ...bearer(w.token), 'content-type': 'application/x-www-form-urlencoded' });
        expect(customer.status).toBe(200);
        await api(w, 'POST', '/clock/advance', { by: '1m' });
        const greeting = await createGreeting(w, 'Bo');
        const r = (path: string) => api(w, 'GET', path, undefined, w.readToken).then((a) => (expect([path, a.status]).toEqual([path, 200]), a.json()));

        const map = await r('/map');
        const twin = (name: string) => map.twins.find((t: { twin: string }) => t.twin === name);
        expect(twin('hello').position).toBe(1);
        expect(twin('hello').resources).toContainEqual({ type: 'greeting', count: 1 });
        expect(twin('stripe').resources).toContainEqual({ type: 'customer', count: 1 });
        const stripeHead = twin('stripe').position as number;
        expect(stripeHead).toBeGreaterThanOrEqual(1);
        expect(twin('github').position).toBe(0);

        const timeline = await r('/timeline');
        expect(timeline.entries[0]).toMatchObject({ twin: 'hello', position: 1, entry: { occurredAt: at(T0, 60_000), cause: { route: 'greetings.create' } } });
        expect(timeline.entries.slice(1).map((e: { twin: string }) => e.twin)).toEqual(Array(stripeHead).fill('stripe'));
        expect(timeline.entries.map((e: { entry: { cause: { route?: string } } }) => e.entry.cause.route)).toContain('customers.create');
        const firstPage = await r('/timeline?limit=1');
        expect(firstPage.entries).toHaveLength(1);
        const secondPage = await r(`/timeline?limit=1&before=${encodeURIComponent(firstPage.next)}`);
        expect(secondPage.entries[0]).toMatchObject({ twin: 'stripe', position: stripeHead });
        expect((await r('/timeline?twin=hello')).entries).toHaveLength(1);

        const log = await r('/log/hello');
        expect(log.entries.map((e: { position: number }) => e.position)).toEqual([1]);
        expect((await r('/log/hello?after=1')).entries).toEqual([]);
        const diff = await r('/diff');
        expect(new Set(diff.changes.map((c: { twin: string }) => c.twin))).toEqual(new Set(['stripe', 'hello']));

        const cut = async (instant: string) => {
          const views = (await r(`/history?at=${instant}`)).views as Record<string, { view: string; position: number }>;
          expect(views['hello']!.view).toMatch(/@hello:\d+$/);
          return [views['stripe']!.position, views['hello']!.position];
        };
        expect(await cut(at(T0, -1000))).toEqual([0, 0]);
        expect(await cut(T0)).toEqual([stripeHead, 0]);
        expect(await cut(at(T0, 60_000))).toEqual([stripeHead, 1]);

        expect((await r('/checkpoint/hello')).records.greeting).toHaveProperty(greeting);
        expect(await r('/checkpoint/hello?at=0')).toEqual({ twin: 'hello', position: 0, records: {} });
        expectRefused(await api(w, 'GET', '/checkpoint/hello?at=9'), 404, 'position_beyond_head');
      });

      test('the request report counts what each twin answered', async () => {
        const w = await host.openWorld();
        await createGreeting(w, 'Cy');
        await vendor(w, 'GET', '/hello/v1/greetings/grt_none');
        const report = (await api(w, 'GET', '/requests?hours=1', undefined, w.readToken)).json();
        expect(report.hours).toBe(1);
        const hello = report.twins.find((t: { twin: string }) => t.twin === 'hello');
        expect(hello).toMatchObject({ total: 2, byStatusClass: { '2xx': 1, '4xx': 1 } });
        expect(hello.topRoutes).toContainEqual({ route: 'greetings.create', count: 1 });
        expect(report.twins.find((t: { twin: string }) => t.twin === 'stripe').total).toBe(0);
        expectRefused(await api(w, 'GET', '/requests?hours=abc'), 400, 'bad_request');
      });

      test("a traceparent rides into the log, and the timeline follows its trace", async () => {
        const w = await host.openWorld();
        const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
        await createGreeting(w, 'Ada', { ...bearer(w.token), traceparent: `00-${trace}-00f067aa0ba902b7-01` });
        await createGreeting(w, 'Untraced');
        const page = (await api(w, 'GET', `/timeline?trace=${trace}`, undefined, w.readToken)).json();
        expect(page.entries).toHaveLength(1);
        expect(page.entries[0].entry.traceparent).toContain(trace);
      });

      test("the read token sees a twin's secrets redacted; the token sees them", async () => {
        const w = await host.openWorld();
        const made = await vendor(w, 'POST', '/stripe/v1/webhook_endpoints', 'url=https%3A%2F%2Fexample.com%2Fhook&enabled_events[]=customer.created', {
          ...bearer(w.token),
          'content-type': 'application/x-www-form-urlencoded',
        });
        const secret = (made.json() as { secret: string }).secret;
        expect(secret).toMatch(/^whsec_/);
        for (const path of ['/timeline?twin=stripe', '/log/stripe', '/diff', '/checkpoint/stripe']) {
          expect([path, (await api(w, 'GET', path)).text]).toEqual([path, expect.stringContaining(secret)]);
          const read = (await api(w, 'GET', path, undefined, w.readToken)).text;
          expect([path, read.includes(secret), read.includes('[redacted]')]).toEqual([path, false, true]);
        }
      });
    });

    group('a stream and a budget', () => {
      test('a stream is a WebSocket at …/streams/<id> whose first message is the world token', async () => {
        const w = await host.openWorld();
        expectRefused(await api(w, 'GET', '/streams/smtp'), 426, 'upgrade_required');
        const open = (token: string) =>
          new Promise<string>((resolve) => {
            const ws = new WebSocket(`${w.api.replace(/^http/, 'ws')}/streams/smtp`, { perMessageDeflate: false });
            ws.on('open', () => ws.send(token));
            ws.on('message', (data: Buffer) => {
              resolve(`bytes ${data.toString('latin1')}`);
              ws.close();
            });
            ws.on('close', (code: number) => resolve(`closed ${code}`));
            ws.on('error', (e: Error) => resolve(`error ${e.message}`));
          });
        // The SMTP twin's greeting comes first.
        expect(await open(w.token)).toMatch(/^bytes 220 /);
        expect(await open(w.readToken)).toBe('closed 4403');
        expect(await open(WRONG)).toBe('closed 4401');
      });

      test('a stream its client closes is closed back: the close handshake completes, so the client (kit attach) is not left waiting', async () => {
        const w = await host.openWorld();
        const closed = await new Promise<string>((resolve) => {
          const ws = new WebSocket(`${w.api.replace(/^http/, 'ws')}/streams/smtp`, { perMessageDeflate: false });
          let waiting: ReturnType<typeof setTimeout> | undefined;
          ws.on('open', () => ws.send(w.token));
          ws.once('message', () => {
            ws.close(1000, 'client closed');
            // Unanswered, the ws package would wait 30 s before giving up on its own.
            waiting = setTimeout(() => {
              resolve('no close frame back within 5 s');
              ws.terminate();
            }, 5_000);
          });
          ws.on('close', (code: number) => {
            clearTimeout(waiting);
            resolve(`closed ${code}`);
          });
          ws.on('error', (e: Error) => resolve(`error ${e.message}`));
        });
        expect(closed).toBe('closed 1000');
      });

      test("a world's request budget is spent by what its tokens open, then 429 with Retry-After", async () => {
        const w = await host.openWorld({ budget: '3/1m' });
        // Refused credentials spend nothing.
        for (let i = 0; i < 4; i++) expectRefused(await api(w, 'GET', '/clock', undefined, WRONG), 401, 'unauthenticated');
        expect((await api(w, 'GET', '/clock')).status).toBe(200);
        expect((await vendor(w, 'GET', '/hello/v1/greetings')).status).toBe(200);
        expect((await api(w, 'GET', '/map', undefined, w.readToken)).status).toBe(200);
        for (const a of [await api(w, 'GET', '/clock'), await vendor(w, 'GET', '/hello/v1/greetings')]) {
          expectRefused(a, 429, 'request_budget_exhausted');
          expect(Number(a.headers['retry-after'])).toBeGreaterThanOrEqual(1);
          expect(a.headers['x-kit-world-code']).toMatch(WORLD_CODE);
        }
      });
    });

    group("changing a world's behaviour", () => {
      test('a world nobody used for a while keeps its clock, records, scenario and checks', async () => {
        const w = await host.openWorld();
        await setClock(w, T0);
        const id = await createGreeting(w, 'Kept');
        const doc = 'handlers:\n  - name: teapot\n    match: GET /v1/teapot\n    respond: { status: 418 }\n';
        expect((await api(w, 'PUT', '/twins/hello/scenario', doc, w.token, { 'content-type': 'application/yaml' })).status).toBe(200);
        const check = "export const check = { name: 'kept', run() { return true; } };";
        expect((await api(w, 'PUT', '/checks/kept', check, w.token, { 'content-type': 'text/javascript' })).status).toBe(200);

        await host.idle(w);
        expect((await api(w, 'GET', '/clock')).json()).toEqual({ at: T0, frozen: true });
        expect((await vendor(w, 'GET', `/hello/v1/greetings/${id}`)).json()).toMatchObject({ id, name: 'Kept' });
        expect((await api(w, 'GET', '/twins/hello/scenario')).text).toBe(doc);
        expect((await vendor(w, 'GET', '/hello/v1/teapot')).status).toBe(418);
        expect((await api(w, 'GET', '/checks/kept')).text).toBe(check);
      });

      test('a world nobody used for a while keeps its request report', async () => {
        const w = await host.openWorld();
        await createGreeting(w, 'Counted');
        expect((await vendor(w, 'GET', '/hello/v1/greetings')).status).toBe(200);
        const report = async () => ((await api(w, 'GET', '/requests')).json().twins as { twin: string; total: number }[]).find((t) => t.twin === 'hello')!.total;
        expect(await report()).toBe(2);
        await host.idle(w);
        expect((await vendor(w, 'GET', '/hello/v1/greetings')).status).toBe(200);
        // The report covers the hours asked for (24 by default), not the time since the world last opened.
        expect(await report()).toBe(3);
      });

      test('a scenario: put, in force on the next request, a bad document refused, deleted', async () => {
        const w = await host.openWorld();
        const doc = [
          'handlers:',
          '  - name: teapot',
          '    match: GET /v1/greetings',
          '    respond:',
          '      status: 418',
          '      body: { error: { type: invalid_request_error, code: teapot, message: short and stout } }',
          '',
        ].join('\n');
        const yaml = { 'content-type': 'application/yaml' };
        expect((await api(w, 'PUT', '/twins/hello/scenario', doc, w.token, yaml)).json()).toMatchObject({ twin: 'hello', format: 'yaml', handlers: 1 });
        const stored = await api(w, 'GET', '/twins/hello/scenario');
        expect([stored.status, stored.headers['content-type'], stored.text]).toEqual([200, 'application/yaml', doc]);
        expect((await vendor(w, 'GET', '/hello/v1/greetings')).status).toBe(418);
        expect((await vendor(w, 'GET', '/hello/twin/scenario', undefined, kit(w.readToken))).json().handlers[0]).toMatchObject({ name: 'teapot', matched: 1 });

        const bad = await api(w, 'PUT', '/twins/hello/scenario', 'handlers:\n  - name: x\n    respond: { status: 99 }\n', w.token, yaml);
        expect([bad.status, errorCode(bad), bad.json().error.field]).toEqual([400, 'invalid_scenario', 'handlers[0].match']);
        expectRefused(await api(w, 'PUT', '/twins/hello/scenario', '{"handlers": ', w.token, { 'content-type': 'application/json' }), 400, 'invalid_scenario');
        // The one in force stays.
        expect((await vendor(w, 'GET', '/hello/v1/greetings')).status).toBe(418);
        expectRefused(await api(w, 'PUT', '/twins/hello/scenario', doc, w.readToken, yaml), 403, 'forbidden');

        expect((await api(w, 'DELETE', '/twins/hello/scenario')).status).toBe(204);
        expectRefused(await api(w, 'GET', '/twins/hello/scenario'), 404, 'no_scenario');
        expect((await vendor(w, 'GET', '/hello/v1/greetings')).status).toBe(200);
      });

      test('checks: put, listed, read back, a file without a check refused, deleted', async () => {
        const w = await host.openWorld();
        const source = "export const check = { name: 'names are short', run(entry) { return entry.writes.every((w) => !w.value || String(w.value.name ?? '').length <= 5) || 'too long'; } };";
        const js = { 'content-type': 'text/javascript' };
        expect((await api(w, 'PUT', '/checks/short-names', source, w.token, js)).json()).toMatchObject({ name: 'short-names', declared: 'names are short' });
        expect((await api(w, 'GET', '/checks')).json().checks).toEqual([expect.objectContaining({ name: 'short-names', declared: 'names are short' })]);
        const back = await api(w, 'GET', '/checks/short-names');
        expect([back.status, back.headers['content-type'], back.text]).toEqual([200, 'text/javascript', source]);
        expectRefused(await api(w, 'PUT', '/checks/nothing', 'export const x = 1;', w.token, js), 400, 'invalid_check');
        expectRefused(await api(w, 'PUT', '/checks/x', source, w.readToken, js), 403, 'forbidden');
        expect((await api(w, 'DELETE', '/checks/short-names')).status).toBe(204);
        expectRefused(await api(w, 'GET', '/checks/short-names'), 404, 'unknown_check');
        expect((await api(w, 'GET', '/checks')).json().checks).toEqual([]);
      });
    });

    group('HTTP as every host speaks it', () => {
      const shared = sharedWorld();

      test("HEAD answers with no body and the GET's content-length: the world API", async () => {
        const w = shared();
        await setClock(w, T0);
        // …/branches too, whether the host makes branches (200) or not (404), and the world's own 404.
        for (const path of ['/map', '/clock', '/twins', '/branches', '/checks/none']) {
          const get = await api(w, 'GET', path);
          const head = await api(w, 'HEAD', path);
          expect([path, head.status, head.text, head.headers['content-length']]).toEqual([path, get.status, '', String(Buffer.byteLength(get.text))]);
        }
        // A refusal too: its length is the GET's refusal's.
        const get = await send('GET', `${w.api}/map`);
        const head = await send('HEAD', `${w.api}/map`);
        expect([head.status, head.text, head.headers['content-length']]).toEqual([401, '', String(Buffer.byteLength(get.text))]);
      });

      test("HEAD answers with no body and the GET's content-length: the vendor wire", async () => {
        const w = shared();
        const id = await createGreeting(w, 'Head');
        for (const path of [`/hello/v1/greetings/${id}`, '/hello/v1/greetings', '/hello/twin']) {
          const get = await vendor(w, 'GET', path);
          const head = await vendor(w, 'HEAD', path);
          expect([path, head.status, head.text, head.headers['content-length']]).toEqual([path, 200, '', String(Buffer.byteLength(get.text))]);
        }
      });

      test('a preflight is answered before the credential on both surfaces, and the twin never sees it', async () => {
        const w = shared();
        const origin = 'http://app.localhost:5173';
        const before = await answeredByTwin(w);
        for (const url of [`${w.url}/stripe/v1/customers`, `${w.api}/clock`]) {
          const a = await send('OPTIONS', url, { headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type, stripe-version' } });
          expect([url, a.status, a.text]).toEqual([url, 204, '']);
          expect(a.headers).toMatchObject({
            'access-control-allow-origin': '*',
            'access-control-allow-headers': 'authorization,content-type, stripe-version',
            'access-control-max-age': '300',
            'x-kit-world-code': expect.stringMatching(WORLD_CODE),
          });
          expect(a.headers['access-control-allow-methods']?.split(', ')).toContain('POST');
          expect(a.headers['access-control-allow-credentials']).toBeUndefined();
        }
        expect(await answeredByTwin(w)).toEqual(before);
        // An OPTIONS that is no preflight is a request for the twin: the credential first.
        expectRefused(await send('OPTIONS', `${w.url}/stripe/v1/customers`, { headers: { origin } }), 401, 'unauthenticated');
      });

      test('a page of another origin may read every answer, refusals included; other answers are left alone', async () => {
        const w = shared();
        const origin = { origin: 'http://app.localhost:5173' };
        const cases: [string, Promise<Answer>, number][] = [
          ['ok', api(w, 'GET', '/map', undefined, w.token, origin), 200],
          ['twin', vendor(w, 'GET', '/stripe/v1/customers', undefined, { ...bearer(w.token), ...origin }), 200],
          ['no credential', send('GET', `${w.api}/map`, { headers: origin }), 401],
          ['read token writes', api(w, 'PUT', '/clock', { at: T0 }, w.readToken, origin), 403],
          ['unknown world', send('GET', `${w.base}/-/${w.org}/no-such-world/map`, { headers: { ...kit(w.token), ...origin } }), 404],
          ['too large', vendor(w, 'POST', '/hello/v1/greetings', 'x'.repeat(MAX_BODY + 1), { ...bearer(w.token), ...origin }), 413],
        ];
        for (const [what, pending, status] of cases) {
          const a = await pending;
          expect([what, a.status, a.headers['access-control-allow-origin'], a.headers['access-control-expose-headers']]).toEqual([what, status, '*', '*']);
        }
        const plain = await api(w, 'GET', '/map');
        expect([plain.headers['access-control-allow-origin'], plain.headers['access-control-expose-headers']]).toEqual([undefined, undefined]);
      });

      test('what names no world, or nothing in one, is 404 in the error shape', async () => {
        const w = shared();
        const cases: [string, string][] = [
          [`${w.base}/`, 'not_found'],
          [`${w.base}/favicon.ico`, 'not_found'],
          [`${w.base}/${w.org}/no-such-world/hello/v1/greetings`, 'unknown_world'],
          [`${w.base}/-/${w.org}/no-such-world/clock`, 'unknown_world'],
          [`${w.base}/no-such-org/${w.world}/hello/v1/greetings`, 'unknown_world'],
          [`${w.url}`, 'not_found'],
          [`${w.url}/`, 'not_found'],
          [`${w.api}/no-such-endpoint`, 'not_found'],
          [`${w.api}/twins/nosuch/status`, 'unknown_twin'],
        ];
        for (const [url, code] of cases) {
          const a = await send('GET', url, { headers: kit(w.token) });
          expect([url, a.status, errorCode(a), a.headers['content-type']]).toEqual([url, 404, code, 'application/json']);
          expect(a.headers['x-kit-world-code']).toEqual(expect.any(String));
        }
      });

      test('doubled slashes are folded, and a trailing slash dropped on the world API', async () => {
        const w = shared();
        const clock = (await api(w, 'GET', '/clock')).text;
        for (const url of [`${w.api}/clock/`, `${w.base}//-/${w.org}//${w.world}//clock`]) {
          const a = await send('GET', url, { headers: kit(w.token) });
          expect([url, a.status, a.text]).toEqual([url, 200, clock]);
        }
        expect((await send('GET', `${w.url}//hello//twin`, { headers: kit(w.token) })).json()).toMatchObject({ vendor: 'hello' });
      });

      test('a body over 4 MB is 413 body_too_large, on either surface; 4 MB is not', async () => {
        const w = shared();
        expectRefused(await vendor(w, 'POST', '/hello/v1/greetings', 'x'.repeat(MAX_BODY + 1)), 413, 'body_too_large');
        expectRefused(await api(w, 'PUT', '/twins/hello/scenario', 'x'.repeat(MAX_BODY + 1), w.token, { 'content-type': 'application/yaml' }), 413, 'body_too_large');
        const fourMegabytes = JSON.stringify({ name: 'x'.repeat(MAX_BODY - '{"name":""}'.length) });
        expect(Buffer.byteLength(fourMegabytes)).toBe(MAX_BODY);
        // hello reads it, and refuses a name that long in its own words.
        const atLimit = await vendor(w, 'POST', '/hello/v1/greetings', fourMegabytes, { ...bearer(w.token), 'content-type': 'application/json' });
        expect([atLimit.status, atLimit.json().error.param]).toEqual([400, 'name']);
        // The connection answered a 413 and the host still answers.
        expect((await api(w, 'GET', '/clock')).status).toBe(200);
      });

      test('a body still being sent when the host answers gets that answer, never a reset: 8 MB with a length or chunked (413), or with a wrong token (401)', async () => {
        const w = shared();
        const url = `${w.url}/hello/v1/greetings`;
        const headers = { ...bearer(w.token), 'content-type': 'application/json' };
        expect(await sendStreaming(url, headers, 2 * MAX_BODY, true)).toBe('413 body_too_large');
        expect(await sendStreaming(url, headers, 2 * MAX_BODY, false)).toBe('413 body_too_large');
        expect(await sendStreaming(url, { ...headers, ...bearer(WRONG) }, 2 * 1024 * 1024, true)).toBe('401 unauthenticated');
        expect((await api(w, 'GET', '/clock')).status).toBe(200);
      });
    });

    group('branches', () => {
      test('POST makes a branch with its own tokens and URLs; GET lists it', async () => {
        const w = await host.openWorld();
        expect((await api(w, 'GET', '/branches', undefined, w.readToken)).json()).toEqual([]);
        const b = await makeBranch(w);
        expect(b.name).toMatch(new RegExp(`^${w.org}/${w.world}-[0-9a-f]{4}$`));
        expect(b.made).toMatchObject({ expiresAt: null, url: `${w.base}/${b.name}`, api: `${w.base}/-/${b.name}` });
        expect([b.token, b.readToken]).not.toContain(w.token);
        const listed = (await api(w, 'GET', '/branches', undefined, w.readToken)).json();
        expect(listed).toEqual([{ name: b.name, from: w.name, at: expect.any(String), createdAt: expect.any(String), expiresAt: null }]);
        // A branch as of now, its clock frozen at that instant.
        expect((await api(b, 'GET', '/clock')).json()).toEqual({ at: listed[0].at, frozen: true });
        expectRefused(await api(w, 'PUT', '/branches', {}), 405, 'method_not_allowed');
      }, ['branches']);

      test('the rules of a branch request: ttl, label, live, at, the body', async () => {
        const w = await host.openWorld();
        const refused = async (body: string | object, code: string) => expectRefused(await api(w, 'POST', '/branches', body), 400, code, JSON.stringify(body));
        for (const ttl of [59, 2_592_001, '600', 600.5, -1]) await refused({ ttl }, 'invalid_ttl');
        for (const label of ['Bad', '-x', 'a'.repeat(41), 'a_b', 7]) await refused({ label }, 'invalid_label');
        await refused({ live: true, at: T0 }, 'live_branch_needs_now');
        for (const instant of ['yesterday', 5]) await refused({ at: instant }, 'invalid_instant');
        await refused({ colour: 'red' }, 'bad_request');
        await refused('[]', 'bad_request');
        await refused('not json', 'invalid_json');
        expect((await api(w, 'GET', '/branches')).json()).toEqual([]);

        for (const ttl of [60, 2_592_000]) {
          const b = await makeBranch(w, { ttl });
          const record = (await api(w, 'GET', '/branches')).json().find((r: { name: string }) => r.name === b.name);
          expect(Date.parse(record.expiresAt) - Date.parse(record.createdAt)).toBe(ttl * 1000);
          expect(b.made.expiresAt).toBe(record.expiresAt);
        }
        expect((await makeBranch(w, { label: 'ok-1' })).name).toMatch(new RegExp(`^${w.org}/${w.world}-ok-1-[0-9a-f]{4}$`));
        expect((await makeBranch(w, { label: 'a'.repeat(40) })).world).toMatch(/^.+-a{40}-[0-9a-f]{4}$/);
        // A live branch keeps the world's time: its clock is not frozen.
        expect((await api(await makeBranch(w, { live: true }), 'GET', '/clock')).json().frozen).toBe(false);
      }, ['branches']);

      test('a branch at a past instant: its clock frozen there, and only what existed then', async () => {
        const w = await host.openWorld();
        await setClock(w, T0);
        const before = await createGreeting(w, 'Before');
        await api(w, 'POST', '/clock/advance', { by: '1h' });
        const after = await createGreeting(w, 'After');
        const cut = at(T0, 30 * 60_000);
        const b = await makeBranch(w, { at: cut });
        expect((await api(w, 'GET', '/branches')).json()[0]).toMatchObject({ name: b.name, from: w.name, at: cut });
        expect((await api(b, 'GET', '/clock')).json()).toEqual({ at: cut, frozen: true });
        expect((await vendor(b, 'GET', `/hello/v1/greetings/${before}`)).json()).toMatchObject({ id: before, name: 'Before' });
        expect((await vendor(b, 'GET', `/hello/v1/greetings/${after}`)).status).toBe(404);
        const position = async (x: HostWorld) => (await api(x, 'GET', '/map')).json().twins.find((t: { twin: string }) => t.twin === 'hello').position;
        expect([await position(b), await position(w)]).toEqual([1, 2]);
        // From then on each goes its own way.
        const inBranch = await createGreeting(b, 'Branch only');
        expect((await vendor(w, 'GET', `/hello/v1/greetings/${inBranch}`)).status).toBe(404);
        expect((await vendor(w, 'GET', `/hello/v1/greetings/${after}`)).status).toBe(200);
        expect((await api(w, 'GET', '/clock')).json()).toEqual({ at: at(T0, 3_600_000), frozen: true });
      }, ['branches']);

      test("a branch's tokens open it and not its parent, and the parent's do not open it", async () => {
        const w = await host.openWorld();
        const b = await makeBranch(w);
        for (const [x, y] of [[w, b], [b, w]] as const) {
          for (const token of [x.token, x.readToken]) {
            expectRefused(await api(y, 'GET', '/clock', undefined, token), 401, 'unauthenticated');
            expect((await vendor(y, 'GET', '/hello/v1/greetings', undefined, bearer(token))).status).toBe(401);
          }
        }
        expect((await api(b, 'GET', '/clock', undefined, b.readToken)).status).toBe(200);
        expectRefused(await api(b, 'PUT', '/clock', { at: T0 }, b.readToken), 403, 'forbidden');
        expect((await vendor(b, 'GET', '/hello/v1/greetings', undefined, bearer(b.token))).status).toBe(200);
      }, ['branches']);

      test('a branch of a branch; what DELETE removes and what it refuses', async () => {
        const w = await host.openWorld();
        const other = await host.openWorld();
        const child = await makeBranch(w, { label: 'one' });
        expect(child.world).toMatch(new RegExp(`^${w.world}-one-[0-9a-f]{4}$`));
        const grandchild = await makeBranch(child);
        expect(grandchild.name).toMatch(new RegExp(`^${child.name}-[0-9a-f]{4}$`));
        expect((await api(w, 'GET', '/branches')).json().map((r: { name: string }) => r.name)).toEqual([child.name]);
        expect((await api(child, 'GET', '/branches')).json()).toEqual([expect.objectContaining({ name: grandchild.name, from: child.name })]);

        const del = (x: HostWorld, name: string) => api(x, 'DELETE', `/branches/${name}`);
        // Not a branch of this world: the grandchild, the world itself, another world.
        for (const name of [grandchild.name, w.name, other.name]) expectRefused(await del(w, name), 404, 'unknown_branch', name);
        expectRefused(await del(w, 'NOT/a-name'), 400, 'invalid_name');
        expectRefused(await del(w, child.name), 409, 'world_has_branches');
        expectRefused(await api(w, 'DELETE', `/branches/${child.name}`, undefined, w.readToken), 403, 'forbidden');

        expect((await del(child, grandchild.name)).status).toBe(204);
        expectRefused(await api(grandchild, 'GET', '/clock'), 404, 'unknown_world');
        expect((await del(w, child.name)).status).toBe(204);
        expectRefused(await api(child, 'GET', '/clock'), 404, 'unknown_world');
        expect((await api(w, 'GET', '/branches')).json()).toEqual([]);
        expect((await api(other, 'GET', '/clock')).status).toBe(200);
      }, ['branches']);
    });

    worldsSideBySideCases({ test, group, sharedWorld, host: () => host });
    browserAccessCases({ test, group, sharedWorld, host: () => host });
    rootsCases({ test, group, sharedWorld, host: () => host });
    changesetsCases({ test, group, sharedWorld, host: () => host });
  });

}

/**
 * A POST whose body of `total` bytes goes out 64 KiB at a time, each piece once the last has
 * drained (as a client on a slow link sends it), with its length declared or chunked; answers
 * `<status> <error code>`, or how the connection failed.
 */
function sendStreaming(url: string, headers: Record<string, string>, total: number, declared: boolean): Promise<string> {
  const target = new URL(url);
  return new Promise((resolve) => {
    const req = httpRequest(
      { host: target.hostname, port: target.port, method: 'POST', path: target.pathname, agent: false, headers: declared ? { ...headers, 'content-length': String(total) } : headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e: NodeJS.ErrnoException) => resolve(`response ${e.code ?? e.message}`));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let code = '';
          try {
            code = String((JSON.parse(text) as { error?: { code?: string } }).error?.code);
          } catch {
            code = text.slice(0, 60);
          }
          resolve(`${res.statusCode} ${code}`);
        });
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => resolve(`request ${e.code ?? e.message}`));
    const piece = Buffer.alloc(64 * 1024, 'x');
    let sent = 0;
    const more = (): void => {
      while (sent < total && !req.destroyed) {
        const n = Math.min(piece.length, total - sent);
        sent += n;
        if (!req.write(piece.subarray(0, n))) {
          req.once('drain', more);
          return;
        }
      }
      if (sent >= total) req.end();
    };
    more();
  });
}
