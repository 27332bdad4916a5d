/**
 * `kit world keys`, `kit world key make`, `kit world key revoke` against a real single-world
 * server (uWS) in front of the real runner with the hello twin: a key made, used, listed
 * without its value, revoked; and the world's refusals as the CLI prints them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintTokens } from '../../host/index.js';
import { startSingleWorldServer } from '../../host/single-world.js';
import type { SingleWorldServer } from '../../host/single-world.js';
import { openTestWorld } from '../../test/helpers/world.js';
import { kit } from '../../test/helpers/kit-cli.js';

const tokens = mintTokens();
let server: SingleWorldServer;

/** `kit world <argv>` with the world named by flags, as its token (or `token`). */
function world(argv: string[], token = tokens.token) {
  return kit(['world', ...argv, '--world', server.worldUrl, '--token', token]);
}

/** Makes a key with the CLI and answers what it printed: the key and its id, read from the `name  value` lines. */
async function makeKey(...argv: string[]): Promise<{ key: string; id: string; out: string[] }> {
  const r = await world(['key', 'make', ...argv]);
  expect(r.code, r.err.join('\n')).toBe(0);
  const value = (name: string): string => {
    const line = r.out.find((l) => l.trimStart().startsWith(`${name} `));
    expect(line, `a "${name}" line`).toBeDefined();
    return (line as string).trim().split(/ +/)[1] as string;
  };
  return { key: value('key'), id: value('id'), out: r.out };
}

/** A greeting made through the hello twin with `credential` as the app's API key. */
async function greetWith(credential: string): Promise<number> {
  const r = await fetch(`${server.worldUrl}/hello/v1/greetings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'name=Ada',
  });
  await r.arrayBuffer();
  return r.status;
}

beforeAll(async () => {
  const testWorld = await openTestWorld({ vendors: ['hello'], world: 'keys' });
  server = await startSingleWorldServer({
    world: testWorld.runner,
    org: 'local',
    worldName: 'keys',
    tokens,
    twins: [{ vendor: 'hello', requestScopes: [] }],
  });
});
afterAll(async () => {
  await server?.close();
});

describe('a named key from making to revoking', () => {
  it('is made and printed once, opens the world, is listed without its value, and opens nothing once revoked', async () => {
    expect(await world(['keys'])).toMatchObject({ code: 0, out: ['local/keys has no keys'], err: [] });

    const made = await makeKey('ci', '--scope', 'write');
    expect(made.key).toMatch(/^tok_k_[A-Za-z0-9_-]{20,}$/);
    expect(made.id).toMatch(/^key_[0-9a-f]{16}$/);
    expect(made.out[0]).toBe('kit: made key ci in local/keys; it is shown this once: keep it now');
    expect(made.out.find((l) => l.trimStart().startsWith('scope '))?.trim()).toMatch(/^scope +write$/);
    expect(made.out).toContain("Use it as the world's token: in x-kit-token, or as the app's API key for the twins. Try:");
    expect(made.out.at(-1)).toBe(`  kit world map --world ${server.worldUrl} --token ${made.key}`);

    // Used: the world's endpoints through the CLI, and a twin with the key as the app's API key.
    const map = await world(['map'], made.key);
    expect(map.code, map.err.join('\n')).toBe(0);
    expect(map.out[0]).toMatch(/^TWIN +POSITION/);
    expect(await greetWith(made.key)).toBe(200);

    const list = await world(['keys']);
    expect(list.code).toBe(0);
    expect(list.out[0]).toMatch(/^ID +NAME +SCOPE +FOR +MADE BY +CREATED +LAST USED +EXPIRES$/);
    expect(list.out).toHaveLength(2);
    const cells = (list.out[1] as string).split(/ {2,}/);
    expect(cells.slice(0, 5)).toEqual([made.id, 'ci', 'write', '-', 'token']);
    expect(cells[5]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
    // It was used above: the world noted when.
    expect(cells[6]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
    expect(cells[7]).toBe('never');
    expect(list.text).not.toContain(made.key);
    const listed = await world(['keys', '--json']);
    expect(JSON.parse(listed.text)).toMatchObject({ keys: [{ id: made.id, name: 'ci', scope: 'write', for: null, createdBy: 'token', expiresAt: null }] });
    expect(listed.text).not.toContain(made.key);

    const revoked = await world(['key', 'revoke', made.id]);
    expect(revoked).toMatchObject({ code: 0, out: [`kit: revoked key ${made.id}; it opens nothing now`], err: [] });
    const refused = await world(['map'], made.key);
    expect(refused.code).toBe(1);
    expect(refused.err).toHaveLength(1);
    expect(refused.err[0]).toMatch(/^kit: .* \(unauthenticated\)$/);
    expect(await greetWith(made.key)).toBe(401);
    expect((await world(['keys'])).out).toEqual(['local/keys has no keys']);

    const again = await world(['key', 'revoke', made.id]);
    expect(again.code).toBe(1);
    expect(again.err).toEqual([`kit: no key "${made.id}" in local/keys (unknown_key)`]);
  });

  it('a read key (the default scope) reads and writes nothing', async () => {
    const made = await makeKey('viewer');
    expect(made.out.find((l) => l.trimStart().startsWith('scope '))?.trim()).toMatch(/^scope +read$/);
    expect((await world(['clock'], made.key)).code).toBe(0);
    const write = await world(['clock', 'advance', '1h'], made.key);
    expect(write.code).toBe(1);
    expect(write.err[0]).toMatch(/^kit: .* \(forbidden\)$/);
    expect((await world(['key', 'revoke', made.id])).code).toBe(0);
  });
});

describe("a person's keys", () => {
  it('keys made --for a person are listed for them, and --person revokes every one of them, saying how many', async () => {
    const laptop = await makeKey('ada-laptop', '--for', 'ada');
    const ci = await makeKey('ada-ci', '--for', 'ada', '--scope', 'write', '--expires', '2099-01-01T00:00:00Z');
    const other = await makeKey('grace-laptop', '--for', 'grace');
    expect(ci.out.find((l) => l.trimStart().startsWith('expires '))?.trim()).toMatch(/^expires +2099-01-01T00:00:00.000Z$/);

    const list = await world(['keys']);
    const row = (id: string): string[] => (list.out.find((l) => l.startsWith(id)) ?? '').split(/ {2,}/);
    expect(row(laptop.id).slice(1, 5)).toEqual(['ada-laptop', 'read', 'ada', 'token']);
    expect(row(laptop.id)[6]).toBe('never');
    expect(row(ci.id).slice(1, 4)).toEqual(['ada-ci', 'write', 'ada']);
    expect(row(ci.id)[7]).toBe('2099-01-01T00:00:00.000Z');

    const revoked = await world(['key', 'revoke', '--person', 'ada']);
    expect(revoked).toMatchObject({ code: 0, out: ['kit: revoked 2 keys made by or for ada'], err: [] });
    for (const key of [laptop.key, ci.key]) expect((await world(['clock'], key)).err[0]).toMatch(/\(unauthenticated\)$/);
    expect((await world(['clock'], other.key)).code).toBe(0);
    expect((await world(['keys'])).out.slice(1).map((l) => l.split(/ {2,}/)[1])).toEqual(['grace-laptop']);

    const none = await world(['key', 'revoke', '--person', 'ada', '--json']);
    expect(none.code).toBe(0);
    expect(JSON.parse(none.text)).toEqual({ revoked: 0 });
    expect((await world(['key', 'revoke', '--person', 'grace'])).out).toEqual(['kit: revoked 1 key made by or for grace']);
  });
});

describe('an expired key', () => {
  it('opens nothing once its instant passes, and is listed as expired until revoked', async () => {
    const at = new Date(Date.now() + 1500).toISOString();
    const brief = await makeKey('brief', '--expires', at);
    expect((await world(['clock'], brief.key)).code).toBe(0);
    await new Promise((r) => setTimeout(r, Date.parse(at) - Date.now() + 50));
    expect((await world(['clock'], brief.key)).err[0]).toMatch(/\(unauthenticated\)$/);
    const row = ((await world(['keys'])).out.find((l) => l.startsWith(brief.id)) ?? '').split(/ {2,}/);
    expect(row[7]).toBe(`${at} (expired)`);
    expect((await world(['key', 'revoke', brief.id])).code).toBe(0);
  });
});

describe('--json', () => {
  it("prints the world's answer: the key once with its record, then the list without it", async () => {
    const made = await world(['key', 'make', 'script', '--json']);
    expect(made.code).toBe(0);
    expect(made.out).toHaveLength(1);
    const answer = JSON.parse(made.text) as { id: string; key: string; name: string; scope: string; createdBy: string };
    expect(answer).toMatchObject({ name: 'script', scope: 'read', createdBy: 'token', for: null, expiresAt: null, lastUsedAt: null });
    expect(answer.key).toMatch(/^tok_k_/);
    expect((await world(['clock'], answer.key)).code).toBe(0);
    const listed = JSON.parse((await world(['keys', '--json'])).text) as { keys: Record<string, unknown>[] };
    expect(listed.keys.map((k) => k['id'])).toEqual([answer.id]);
    expect(listed.keys[0]).not.toHaveProperty('key');
    const revoked = await world(['key', 'revoke', answer.id, '--json']);
    expect(revoked).toMatchObject({ code: 0, out: [], err: [] });
    expect((await world(['clock'], answer.key)).code).toBe(1);
  });
});

describe("the world's refusals, one line each, exit 1", () => {
  it('the read token and a key manage no keys', async () => {
    const read = await world(['keys'], tokens.readToken);
    expect(read.code).toBe(1);
    expect(read.out).toEqual([]);
    expect(read.err).toHaveLength(1);
    expect(read.err[0]).toMatch(/^kit: the read token does not open GET \/keys.* \(forbidden\)$/);
    expect((await world(['key', 'make', 'sneaky'], tokens.readToken)).err[0]).toMatch(/\(forbidden\)$/);

    const writer = await makeKey('deployer', '--scope', 'write');
    for (const argv of [['keys'], ['key', 'make', 'escalate', '--scope', 'write'], ['key', 'revoke', writer.id]]) {
      const r = await world(argv, writer.key);
      expect(r.code, argv.join(' ')).toBe(1);
      expect(r.err).toEqual(["kit: named keys are managed with the world's token or a person's session, never with a key (keys_need_write_access)"]);
    }
    // The key it tried to revoke still stands.
    expect((await world(['map'], writer.key)).code).toBe(0);
    expect((await world(['key', 'revoke', writer.id])).code).toBe(0);
  });

  it('a name stands until revoked or replaced; --replace ends the old key', async () => {
    const first = await makeKey('nightly');
    const taken = await world(['key', 'make', 'nightly']);
    expect(taken.code).toBe(1);
    expect(taken.out).toEqual([]);
    expect(taken.err).toEqual(['kit: a key named "nightly" stands already in local/keys; --replace ends it and makes a new one (key_name_taken)']);
    // A name is taken per person: the same name for someone else is another key.
    const forAda = await makeKey('nightly', '--for', 'ada');
    expect((await world(['key', 'make', 'nightly', '--for', 'ada'])).err).toEqual(['kit: a key named "nightly" for ada stands already in local/keys; --replace ends it and makes a new one (key_name_taken)']);
    expect((await world(['key', 'revoke', forAda.id])).code).toBe(0);

    const second = await makeKey('nightly', '--replace');
    expect(second.id).not.toBe(first.id);
    expect((await world(['clock'], first.key)).err[0]).toMatch(/\(unauthenticated\)$/);
    expect((await world(['clock'], second.key)).code).toBe(0);
    const names = (await world(['keys'])).out.slice(1).map((l) => l.split(/ {2,}/).slice(0, 2));
    expect(names).toEqual([[second.id, 'nightly']]);
    expect((await world(['key', 'revoke', second.id])).code).toBe(0);
  });

  it('an expiry in the past, a bad name: the world says which field', async () => {
    const past = await world(['key', 'make', 'old', '--expires', '2001-01-01T00:00:00Z']);
    expect(past.code).toBe(1);
    expect(past.err).toEqual(['kit: expiresAt must be an ISO instant in the future (bad_request)']);
    const long = await world(['key', 'make', 'x'.repeat(65)]);
    expect(long.err).toEqual(['kit: name must be 1 to 64 printable characters (bad_request)']);
    expect((await world(['keys'])).out).toEqual(['local/keys has no keys']);
  });
});

describe('usage', () => {
  it('a bad --scope, revoke with neither or both an id and --person: a line and the usage, exit 2, nothing sent', async () => {
    const scope = await world(['key', 'make', 'ci', '--scope', 'admin']);
    expect(scope.code).toBe(2);
    expect(scope.err[0]).toBe('kit: --scope is read or write, got "admin"');
    expect(scope.err.slice(2).join('\n')).toMatch(/^Usage: kit world key make <name> \[--scope read\|write\] \[--for PERSON\] \[--expires INSTANT\] \[--replace\]/);

    const expires = await world(['key', 'make', 'ci', '--expires', 'tomorrow']);
    expect(expires.code).toBe(2);
    expect(expires.err[0]).toBe('kit: --expires is an ISO 8601 instant (2026-12-31T00:00:00Z), got "tomorrow"');

    const neither = await world(['key', 'revoke']);
    expect(neither.code).toBe(2);
    expect(neither.err[0]).toBe('kit: kit world key revoke needs a key id (kit world keys lists them) or --person PERSON');
    const both = await world(['key', 'revoke', 'key_0123456789abcdef', '--person', 'ada']);
    expect(both.code).toBe(2);
    expect(both.err[0]).toBe('kit: kit world key revoke takes a key id or --person, not both');

    const family = await world(['key']);
    expect(family.code).toBe(2);
    expect(family.err[0]).toBe('kit: name a command: kit world key make|revoke');
    expect((await world(['keys'])).out).toEqual(['local/keys has no keys']);
  });

  it('kit world --help lists the key commands', async () => {
    const help = (await kit(['world', '--help'])).text;
    for (const name of ['kit world keys', 'kit world key make <name>', 'kit world key revoke [id] [--person PERSON]']) expect(help).toContain(name);
  });
});
