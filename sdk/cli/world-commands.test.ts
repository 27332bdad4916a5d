/**
 * `kit world …` against a real single-world server (uWS) in front of the real runner with the
 * hello and Stripe twins: what a person or a script sees for each world endpoint.
 */
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintTokens, writeTokenFile } from '../../host/index.js';
import { startSingleWorldServer } from '../../host/single-world.js';
import type { SingleWorldServer } from '../../host/single-world.js';
import { openTestWorld } from '../../test/helpers/world.js';
import { kit, startKit, until } from '../../test/helpers/kit-cli.js';
import { USAGE, WORLD_USAGE } from './main.js';
import { WORLD_COMMANDS } from './world-commands.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const tokens = mintTokens();
let server: SingleWorldServer;
let dir: string;
let greetingId: string;
let customerId: string;

/** `kit world <argv>` with the world named by flags. */
function world(...argv: string[]) {
  return kit(['world', ...argv, '--world', server.worldUrl, '--token', tokens.token]);
}

async function post(path: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; json: { id: string } }> {
  const r = await fetch(`${server.worldUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokens.token}`, 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body,
  });
  return { status: r.status, json: (await r.json()) as { id: string } };
}

async function worldApi(method: string, path: string, body: unknown): Promise<void> {
  const r = await fetch(`${server.worldApi}${path}`, { method, headers: { 'x-kit-token': tokens.token, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(r.status).toBe(200);
}

/** A port nothing listens on (one just given back by the kernel). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kit-world-cli-'));
  const testWorld = await openTestWorld({ vendors: ['hello', 'stripe'], world: 'shop' });
  server = await startSingleWorldServer({
    world: testWorld.runner,
    org: 'local',
    worldName: 'shop',
    tokens,
    twins: [{ vendor: 'hello', requestScopes: [] }, { vendor: 'stripe', requestScopes: [] }],
  });
  // A greeting at 09:00, a Stripe customer at 10:00 (with a trace), the clock frozen there.
  await worldApi('PUT', '/clock', { at: '2026-05-01T09:00:00.000Z' });
  const greeting = await post('/hello/v1/greetings', 'name=Ada');
  expect(greeting.status).toBe(200);
  greetingId = greeting.json.id;
  await worldApi('POST', '/clock/advance', { by: '1h' });
  const customer = await post('/stripe/v1/customers', 'email=ada%40example.com', { traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` });
  expect(customer.status).toBe(200);
  customerId = customer.json.id;
});
afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('kit world clock', () => {
  it('shows the clock, sets it, advances it, and prints each result', async () => {
    const shown = await world('clock');
    expect(shown).toMatchObject({ code: 0, out: ['at      2026-05-01T10:00:00.000Z', 'frozen  yes (set: every twin stamps from it)'], err: [] });

    const set = await world('clock', 'set', '2026-06-01T00:00:00Z');
    expect(set.code).toBe(0);
    expect(set.out[0]).toBe('at      2026-06-01T00:00:00.000Z');

    const advanced = await world('clock', 'advance', '90m');
    expect(advanced.code).toBe(0);
    expect(advanced.out[0]).toBe('at      2026-06-01T01:30:00.000Z');
    expect(JSON.parse((await world('clock', '--json')).text)).toEqual({ at: '2026-06-01T01:30:00.000Z', frozen: true });
  });

  it("refuses a clock moved back, and a bad duration, with the world's message and code on one line, exit 1", async () => {
    const back = await world('clock', 'set', '2020-01-01T00:00:00Z');
    expect(back.code).toBe(1);
    expect(back.out).toEqual([]);
    expect(back.err).toHaveLength(1);
    expect(back.err[0]).toMatch(/^kit: .*does not move back.* \(clock_backward\)$/);

    const bad = await world('clock', 'advance', 'soon');
    expect(bad.code).toBe(1);
    expect(bad.err).toHaveLength(1);
    expect(bad.err[0]).toMatch(/\(invalid_duration\)$/);
    // Nothing moved.
    expect((await world('clock')).out[0]).toBe('at      2026-06-01T01:30:00.000Z');
  });
});

describe('looking into the world', () => {
  it('map: each twin with its position and its records by type', async () => {
    const r = await world('map');
    expect(r.code).toBe(0);
    expect(r.out[0]).toMatch(/^TWIN +POSITION +RESOURCES +MIRROR$/);
    const hello = r.out.find((l) => l.startsWith('hello '));
    const stripe = r.out.find((l) => l.startsWith('stripe '));
    expect(hello).toMatch(/^hello +1 +.*\bgreeting 1\b/);
    expect(stripe).toMatch(/^stripe +1 +.*\bcustomer 1\b/);
    // Columns line up: every row's second column starts where the header's does.
    const at = r.out[0]?.indexOf('POSITION');
    expect(hello?.indexOf('1')).toBe(at);
    const json = JSON.parse((await world('map', '--json')).text) as { twins: { twin: string; position: number }[] };
    expect(json.twins.map((t) => [t.twin, t.position])).toEqual([['hello', 1], ['stripe', 1]]);
  });

  it('timeline: both requests, oldest at the top, narrowed by twin, trace and limit, and paged back', async () => {
    const r = await world('timeline');
    expect(r.code).toBe(0);
    expect(r.out[0]).toMatch(/^AT +TWIN +POS +CAUSE +WRITES$/);
    expect(r.out.slice(1)).toHaveLength(2);
    expect(r.out[1]).toMatch(new RegExp(`^2026-05-01T09:00:00.000Z +hello +1 +POST /hello/v1/greetings 200 +.*greeting ${greetingId}`));
    expect(r.out[2]).toMatch(new RegExp(`^2026-05-01T10:00:00.000Z +stripe +1 +POST /stripe/v1/customers 200 +.*customer \\S+/${customerId}`));

    expect((await world('timeline', '--twin', 'hello')).out.slice(1).map((l) => l.split(/ +/)[1])).toEqual(['hello']);
    const traced = await world('timeline', '--trace', TRACE_ID);
    expect(traced.out.slice(1)).toHaveLength(1);
    expect(traced.out[1]).toContain(customerId);

    const newest = await world('timeline', '--limit', '1');
    expect(newest.out.slice(1)).toHaveLength(1);
    expect(newest.out[1]).toContain('stripe');
    const cursor = /--before (\S+)$/.exec(newest.err[0] ?? '')?.[1];
    expect(cursor).toBeDefined();
    const older = await world('timeline', '--limit', '1', '--before', cursor as string);
    expect(older.out[1]).toContain(greetingId);

    const json = JSON.parse((await world('timeline', '--json')).text) as { entries: { twin: string; position: number; entry: { traceparent?: string } }[]; next: string | null };
    // As the world answers it: newest first.
    expect(json.entries.map((e) => e.twin)).toEqual(['stripe', 'hello']);
    expect(json.entries[0]?.entry.traceparent).toContain(TRACE_ID);
  });

  it("log: a twin's entries, paged by position; an unknown twin is the world's error", async () => {
    const r = await world('log', 'stripe');
    expect(r.code).toBe(0);
    expect(r.out[0]).toMatch(/^POS +AT +CAUSE +WRITES$/);
    expect(r.out[1]).toMatch(new RegExp(`^1 +2026-05-01T10:00:00.000Z +POST /stripe/v1/customers 200 +.*${customerId}`));
    expect((await world('log', 'stripe', '--after', '1')).out).toEqual(['no entries in the log of stripe after position 1']);
    const json = JSON.parse((await world('log', 'hello', '--json')).text) as { twin: string; entries: { writes: { type: string; id: string }[] }[] };
    expect(json.twin).toBe('hello');
    expect(json.entries[0]?.writes).toContainEqual(expect.objectContaining({ type: 'greeting', id: greetingId }));

    const unknown = await world('log', 'nope');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toHaveLength(1);
    expect(unknown.err[0]).toMatch(/^kit: .* \(unknown_twin\)$/);
    const bad = await world('log', 'stripe', '--after', 'x');
    expect(bad.code).toBe(2);
    expect(bad.err[0]).toBe('kit: --after must be a whole number of at least 0, got "x"');
  });

  it("diff: the world's own changes since its base", async () => {
    const r = await world('diff');
    expect(r.code).toBe(0);
    expect(r.out[0]).toBe("base  none (every entry is the world's own)");
    expect(r.text).toContain(greetingId);
    expect(r.text).toContain(customerId);
    const json = JSON.parse((await world('diff', '--json')).text) as { base: { id: string | null }; changes: unknown[] };
    expect(json.base.id).toBeNull();
    expect(json.changes).toHaveLength(2);
  });

  it('history: where each twin stood at an instant; --at is required', async () => {
    const r = await world('history', '--at', '2026-05-01T09:30:00Z');
    expect(r.code).toBe(0);
    expect(r.out[0]).toMatch(/^TWIN +POSITION +VIEW$/);
    expect(r.out.find((l) => l.startsWith('hello'))).toMatch(/^hello +1 /);
    expect(r.out.find((l) => l.startsWith('stripe'))).toMatch(/^stripe +0 /);
    const json = JSON.parse((await world('history', '--at', '2026-05-01T10:00:00Z', '--json')).text) as { views: Record<string, { position: number }> };
    expect(json.views['stripe']?.position).toBe(1);

    const missing = await world('history');
    expect(missing.code).toBe(2);
    expect(missing.err[0]).toBe('kit: kit world history needs --at <instant>');
    const bad = await world('history', '--at', 'yesterday');
    expect(bad.code).toBe(1);
    expect(bad.err[0]).toMatch(/\(invalid_instant\)$/);
  });

  it("checkpoint: the twin's state as bytes on standard output, the byte count on standard error", async () => {
    const r = await world('checkpoint', 'stripe');
    expect(r.code).toBe(0);
    expect(r.out).toEqual([]);
    const state = JSON.parse(r.stdout.toString('utf8')) as { position: number };
    expect(state.position).toBe(1);
    expect(r.stdout.toString('utf8')).toContain('ada@example.com');
    expect(r.stdout.toString('utf8')).toContain(customerId);
    expect(r.stdout.length).toBeGreaterThan(1024);
    expect(r.err).toEqual([`kit: wrote ${r.stdout.length} bytes (${(r.stdout.length / 1024).toFixed(1)} KiB): the checkpoint of stripe`]);

    const before = await world('checkpoint', 'stripe', '--at', '0');
    expect(before.code).toBe(0);
    expect(JSON.parse(before.stdout.toString('utf8'))).toMatchObject({ position: 0 });
    expect(before.stdout.toString('utf8')).not.toContain('ada@example.com');
    expect(before.err[0]).toContain('at position 0');
  });
});

describe('kit world timeline --follow', () => {
  it('prints the newest entries, then each new one once as it lands, until Ctrl-C (exit 0)', async () => {
    const run = startKit(['world', 'timeline', '--follow', '--interval', '0.05', '--world', server.worldUrl, '--token', tokens.token]);
    await until(() => run.out.length >= 3, 10_000, 'the first page');
    expect(run.out[0]).toMatch(/^AT +TWIN +POS +CAUSE +WRITES$/);
    expect(run.out[1]).toContain(greetingId);
    expect(run.out[2]).toContain(customerId);

    const grace = await post('/hello/v1/greetings', 'name=Grace');
    await until(() => run.out.some((l) => l.includes(grace.json.id)), 10_000, 'the new greeting');
    const later = await post('/stripe/v1/customers', 'email=grace%40example.com');
    await until(() => run.out.some((l) => l.includes(later.json.id)), 10_000, 'the new customer');
    // A few more polls: nothing is printed twice.
    await new Promise((r) => setTimeout(r, 200));
    run.interrupt();
    expect(await run.done).toBe(0);
    expect(run.out).toHaveLength(5);
    expect(run.out[3]).toMatch(/ hello +2 +POST \/hello\/v1\/greetings 200 /);
    expect(run.out[4]).toMatch(/ stripe +2 +POST \/stripe\/v1\/customers 200 /);
    expect(run.err).toEqual([]);
  });

  it('with --json prints one JSON line per entry', async () => {
    const run = startKit(['world', 'timeline', '--follow', '--json', '--limit', '1', '--twin', 'hello', '--interval', '0.05', '--world', server.worldUrl, '--token', tokens.token]);
    await until(() => run.out.length >= 1, 10_000, 'the first entry');
    const made = await post('/hello/v1/greetings', 'name=Edsger');
    await until(() => run.out.length >= 2, 10_000, 'the new entry');
    run.interrupt();
    expect(await run.done).toBe(0);
    const lines = run.out.map((l) => JSON.parse(l) as { twin: string; position: number; entry: { writes: { id: string }[] } });
    expect(lines.map((l) => [l.twin, l.position])).toEqual([['hello', 2], ['hello', 3]]);
    expect(lines[1]?.entry.writes.map((w) => w.id)).toContain(made.json.id);
  });
});

describe('kit world scenario', () => {
  it('prints the validation error the world answered for a bad document, exit 1, and keeps none in force', async () => {
    const file = join(dir, 'broken.yaml');
    await writeFile(file, 'handlers:\n  - name: broken\n    match: POST /v1/greetings\n    respond:\n      status: 9000\n');
    const r = await world('scenario', 'put', 'hello', file);
    expect(r.code).toBe(1);
    expect(r.out).toEqual([]);
    expect(r.err).toEqual(['kit: handlers[0].respond.status: must be an integer 100-599 (handler "broken") (invalid_scenario)']);
    const none = await world('scenario', 'get', 'hello');
    expect(none.code).toBe(1);
    expect(none.err[0]).toMatch(/\(no_scenario\)$/);
  });

  it('puts a document from standard input, gets it back as put, is in force on the twin, and removes it', async () => {
    const doc = 'handlers:\n  - name: no-greetings\n    match: POST /v1/greetings\n    respond:\n      status: 402\n      body: { error: nope }\n';
    const put = await kit(['world', 'scenario', 'put', 'hello', '--world', server.worldUrl, '--token', tokens.token], { stdin: doc });
    expect(put.code).toBe(0);
    expect(put.out[0]).toMatch(/^kit: the scenario of hello is in force: 1 handler \(yaml\), put at \S+$/);
    expect((await world('scenario', 'get', 'hello')).stdout.toString('utf8')).toBe(doc);
    expect((await post('/hello/v1/greetings', 'name=Blocked')).status).toBe(402);

    const removed = await world('scenario', 'rm', 'hello');
    expect(removed).toMatchObject({ code: 0, out: ['kit: removed the scenario of hello'] });
    expect((await post('/hello/v1/greetings', 'name=Free')).status).toBe(200);
    expect((await world('scenario', 'rm', 'hello')).err[0]).toMatch(/\(no_scenario\)$/);
  });

  it('sends a .json file as JSON, kept as JSON; --json prints what the world answered', async () => {
    const file = join(dir, 'scenario.json');
    await writeFile(file, JSON.stringify({ handlers: [{ match: 'GET /v1/greetings/{id}', respond: { status: 404 } }] }));
    const put = await world('scenario', 'put', 'hello', file, '--json');
    expect(put.code).toBe(0);
    expect(JSON.parse(put.text)).toMatchObject({ twin: 'hello', format: 'json', handlers: 1 });
    expect((await world('scenario', 'rm', 'hello')).code).toBe(0);
  });

  it('says which file it cannot read', async () => {
    const r = await world('scenario', 'put', 'hello', join(dir, 'missing.yaml'));
    expect(r.code).toBe(1);
    expect(r.err).toEqual([`kit: cannot read ${join(dir, 'missing.yaml')}: ENOENT (unreadable_file)`]);
  });
});

describe('kit world checks', () => {
  it('puts a check, lists it, gets its source, refuses one that exports no check, and removes it', async () => {
    expect((await world('checks')).out).toEqual(['local/shop has no checks']);
    const source = "export const check = { name: 'greetings have names', run(entry) { return true; } };\n";
    const file = join(dir, 'named.js');
    await writeFile(file, source);
    const put = await world('check', 'put', 'named', file);
    expect(put.code).toBe(0);
    expect(put.out[0]).toMatch(/^kit: stored check named \(it declares "greetings have names"\), at \S+$/);

    const list = await world('checks');
    expect(list.out[0]).toMatch(/^NAME +DECLARES +BYTES +UPDATED$/);
    expect(list.out[1]).toMatch(new RegExp(`^named +greetings have names +${source.length} +\\S+$`));
    expect(JSON.parse((await world('checks', '--json')).text)).toMatchObject({ checks: [{ name: 'named', declared: 'greetings have names' }] });
    expect((await world('check', 'get', 'named')).stdout.toString('utf8')).toBe(source);

    const bad = await kit(['world', 'check', 'put', 'named', '--world', server.worldUrl, '--token', tokens.token], { stdin: 'export const nothing = 1;' });
    expect(bad.code).toBe(1);
    expect(bad.err).toHaveLength(1);
    expect(bad.err[0]).toMatch(/^kit: .* \(invalid_check\)$/);
    // The stored one stays.
    expect((await world('check', 'get', 'named')).stdout.toString('utf8')).toBe(source);

    expect((await world('check', 'rm', 'named')).out).toEqual(['kit: removed check named']);
    expect((await world('checks')).out).toEqual(['local/shop has no checks']);
    const gone = await world('check', 'get', 'named');
    expect(gone.code).toBe(1);
    expect(gone.err[0]).toMatch(/\(unknown_check\)$/);
  });
});

describe('branches on the single-world server', () => {
  it("says the world makes none (the world's not_found), exit 1", async () => {
    for (const argv of [['branches'], ['branch'], ['rm', 'local/shop-x']]) {
      const r = await world(...argv);
      expect(r.code).toBe(1);
      expect(r.err).toHaveLength(1);
      expect(r.err[0]).toMatch(/^kit: .*no branches.* \(not_found\)$/);
    }
  });
});

describe('finding the world', () => {
  it('from KIT_WORLD and KIT_WORLD_TOKEN, with the world URL or the world API URL', async () => {
    for (const url of [server.worldUrl, server.worldApi, `${server.worldUrl}/`]) {
      const r = await kit(['world', 'clock'], { env: { KIT_WORLD: url, KIT_WORLD_TOKEN: tokens.token } });
      expect(r.code, r.err.join('\n')).toBe(0);
      expect(r.out[0]).toMatch(/^at +2026-/);
    }
  });

  it("from the .kit/token that kit world serve writes, in the current directory or --dir; the file's token goes to its own world only", async () => {
    const served = join(dir, 'served');
    await mkdir(served);
    await writeTokenFile(served, { url: server.worldUrl, ...tokens });
    expect((await kit(['world', 'map'], { cwd: served })).code).toBe(0);
    expect((await kit(['world', 'map', '--dir', served])).code).toBe(0);
    expect((await kit(['world', 'map', '--dir', 'served'], { cwd: dir })).code).toBe(0);
    // An explicit --dir wins over the environment.
    const port = await closedPort();
    expect((await kit(['world', 'map', '--dir', served], { env: { KIT_WORLD: `http://127.0.0.1:${port}/local/shop`, KIT_WORLD_TOKEN: 'tok_x' } })).code).toBe(0);
    // The same world named by flag takes the file's token; another world does not get it.
    expect((await kit(['world', 'map', '--world', server.worldApi], { cwd: served })).code).toBe(0);
    const other = await kit(['world', 'map', '--world', `http://127.0.0.1:${port}/local/other`], { cwd: served });
    expect(other.code).toBe(1);
    expect(other.err).toEqual([`kit: no token for http://127.0.0.1:${port}/local/other: pass --token <token> or set KIT_WORLD_TOKEN (no_world)`]);
  });

  it('says how to name a world when none is given, and refuses a corrupt token file', async () => {
    const r = await kit(['world', 'clock'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(/^kit: no world named and no .*\.kit\/token: pass --world <world url> --token <token>, set KIT_WORLD and KIT_WORLD_TOKEN, .* \(no_world\)$/);

    const corrupt = join(dir, 'corrupt');
    await mkdir(join(corrupt, '.kit'), { recursive: true });
    await writeFile(join(corrupt, '.kit', 'token'), '{"url": ');
    const c = await kit(['world', 'clock', '--dir', corrupt]);
    expect(c.code).toBe(1);
    expect(c.err[0]).toMatch(/is not a token file.* \(token_file_corrupt\)$/);

    const noPath = await kit(['world', 'clock', '--world', 'http://127.0.0.1:4440', '--token', tokens.token]);
    expect(noPath.err).toEqual(['kit: the world URL must end in /<org>/<world> (as kit world serve prints it), got http://127.0.0.1:4440 (no_world)']);
  });
});

describe('failures', () => {
  it('names the URL it cannot reach, exit 1', async () => {
    const port = await closedPort();
    const r = await kit(['world', 'clock', '--world', `http://127.0.0.1:${port}/local/shop`, '--token', tokens.token]);
    expect(r.code).toBe(1);
    expect(r.err).toEqual([`kit: cannot reach http://127.0.0.1:${port}/-/local/shop/clock: connection refused (unreachable)`]);
  });

  it("passes on the world's refusals: a wrong token, the read token writing", async () => {
    const wrong = await kit(['world', 'map', '--world', server.worldUrl, '--token', 'tok_notTheToken']);
    expect(wrong.code).toBe(1);
    expect(wrong.err).toHaveLength(1);
    expect(wrong.err[0]).toMatch(/^kit: .* \(unauthenticated\)$/);

    const read = ['--world', server.worldUrl, '--token', tokens.readToken];
    expect((await kit(['world', 'map', ...read])).code).toBe(0);
    const write = await kit(['world', 'clock', 'advance', '1h', ...read]);
    expect(write.code).toBe(1);
    expect(write.err[0]).toMatch(/^kit: the read token does not open POST \/clock\/advance.* \(forbidden\)$/);
  });

  it('answers bad usage with a line and the usage, exit 2, without calling the world', async () => {
    const missing = await world('clock', 'set');
    expect(missing.code).toBe(2);
    expect(missing.err[0]).toBe('kit: kit world clock set needs <instant>');
    expect(missing.err.slice(2).join('\n')).toMatch(/^Usage: kit world clock set <instant>/);
    const family = await world('scenario');
    expect(family.code).toBe(2);
    expect(family.err[0]).toBe('kit: name a command: kit world scenario get|put|rm');
    const extra = await world('map', 'stripe');
    expect(extra.err[0]).toBe('kit: kit world map takes no argument, got stripe');
    expect((await world('rm', 'not-a-world')).err[0]).toMatch(/^kit: name the world as <org>\/<world>/);
    expect((await world('timeline', '--interval', '1')).err[0]).toBe('kit: --interval goes with --follow');
  });
});

describe('help', () => {
  it('kit --help and kit world --help list every world command; each command has its own --help', async () => {
    expect((await kit(['--help'])).text).toBe(USAGE);
    expect((await kit(['world', '--help'])).text).toBe(WORLD_USAGE);
    for (const c of WORLD_COMMANDS.commands) {
      const name = `kit world ${c.words.join(' ')}`;
      expect(USAGE).toContain(name);
      expect(WORLD_USAGE).toContain(name);
      const help = await kit(['world', ...c.words, '--help']);
      expect(help.code).toBe(0);
      expect(help.out[0]?.startsWith(`Usage: ${name}`)).toBe(true);
      expect(help.text).toContain('--world URL');
    }
    for (const name of ['kit world serve', 'kit world attach', 'kit host serve', 'kit host worlds', 'kit host create', 'kit host rotate', 'kit host rm']) expect(USAGE).toContain(name);
  });
});
