/**
 * `kit world twins`, `root`, `credential`, `refresh`, `links`, `link` against a real
 * single-world server (uWS) in front of the real runner, with the notes twin (test/helpers/twins/
 * notes, a twin with a root) rooted at a vendor served on loopback: a root set, a credential
 * sealed from an environment variable and presented by the world to the vendor, refreshes that
 * work and fail, links; and that no secret shows in anything the CLI prints.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintTokens } from '../../host/index.js';
import { startSingleWorldServer } from '../../host/single-world.js';
import type { SingleWorldServer } from '../../host/single-world.js';
import { createNodeOutbound } from '../../runtime/roots/node-outbound.js';
import { createSealer, newSealingKey, sealingKeyBytes } from '../../runtime/roots/sealing.js';
import { fixtureTwin, openTestWorld } from '../../test/helpers/world.js';
import { kit } from '../../test/helpers/kit-cli.js';
import type { KitResult } from '../../test/helpers/kit-cli.js';

const SECRET = 'sk_live_cli0sealed0bearer0value';
const WRONG = 'sk_live_cli0wrong0bearer0value';
const SIGNING = 'whsec_cli0signing0secret';
const OTHER = 'vendor-api-key-0from-stdin-0value';
const ENV = { NOTES_KEY: SECRET, NOTES_SIGNING: SIGNING, WRONG_KEY: WRONG, EMPTY: '' };

const tokens = mintTokens();
let server: SingleWorldServer;
let vendor: Server;
let vendorUrl: string;
/** The authorization header of every request the vendor was sent. */
const presented: (string | undefined)[] = [];
/** Everything the CLI printed in this file, to search for secrets at the end. */
const printed: string[] = [];

/** The real vendor behind the root: notes in pages of two, only to `Bearer <SECRET>`; a refusal repeats the key it was given (the world must not). */
function startVendor(): Promise<void> {
  const notes = [1, 2, 3, 4, 5].map((n) => ({ id: `n${n}`, text: `note ${n}` }));
  vendor = createServer((req, res) => {
    const authorization = req.headers['authorization'];
    presented.push(authorization);
    const url = new URL(req.url ?? '/', 'http://vendor');
    res.setHeader('content-type', 'application/json');
    if (authorization !== `Bearer ${SECRET}`) {
      res.writeHead(401).end(JSON.stringify({ error: `bad key ${authorization ?? 'none'}` }));
      return;
    }
    if (url.pathname !== '/v1/notes') {
      res.writeHead(200).end(JSON.stringify({ path: url.pathname }));
      return;
    }
    const page = Number(url.searchParams.get('page') ?? '1');
    res.writeHead(200).end(JSON.stringify({ notes: notes.slice((page - 1) * 2, page * 2), next: page * 2 < notes.length ? page + 1 : null }));
  });
  return new Promise((done) => vendor.listen(0, '127.0.0.1', () => {
    vendorUrl = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;
    done();
  }));
}

/** The way out of a world: the Node host's own outbound fetch, loopback allowed as on a world served alone. */
const outbound = createNodeOutbound({ loopback: true });

/** `kit world <argv>` with the world named by flags, as its token; what it printed is kept. */
async function world(argv: string[], options: { token?: string; env?: NodeJS.ProcessEnv; stdin?: string } = {}): Promise<KitResult> {
  const r = await kit(['world', ...argv, '--world', server.worldUrl, '--token', options.token ?? tokens.token], {
    env: options.env ?? {},
    ...(options.stdin !== undefined ? { stdin: options.stdin } : {}),
  });
  printed.push(...r.out, ...r.err);
  return r;
}

/** A `name  value` line's value, of lines printed indented or not. */
function valueOf(lines: string[], name: string): string | undefined {
  const line = lines.find((l) => l.trimStart().startsWith(`${name} `));
  return line?.trim().slice(name.length).trim();
}

/** `kit world twins`'s row of a twin, as cells. */
async function twinRow(vendorName: string): Promise<string[]> {
  const r = await world(['twins']);
  expect(r.code, r.err.join('\n')).toBe(0);
  return (r.out.find((l) => l.startsWith(`${vendorName} `)) ?? '').split(/ {2,}/);
}

beforeAll(async () => {
  await startVendor();
  const testWorld = await openTestWorld({
    vendors: ['hello'],
    more: [await fixtureTwin('notes')],
    world: 'roots',
    sealer: createSealer(sealingKeyBytes(newSealingKey())),
    outbound,
    outboundLoopback: true,
  });
  server = await startSingleWorldServer({
    world: testWorld.runner,
    org: 'local',
    worldName: 'roots',
    tokens,
    twins: [
      { vendor: 'hello', requestScopes: [] },
      { vendor: 'notes', requestScopes: [] },
    ],
  });
});
afterAll(async () => {
  await server?.close();
  await new Promise((done) => vendor?.close(done));
});

describe('a twin from its root to its first refresh', () => {
  it('lists the twins with nothing rooted yet', async () => {
    const r = await world(['twins']);
    expect(r.code).toBe(0);
    expect(r.out[0]).toMatch(/^VENDOR +ROOT +CREDENTIAL +LAST REFRESH +NEXT REFRESH +POSITION$/);
    expect(r.out.slice(1).map((l) => l.split(/ {2,}/))).toEqual([
      ['hello', '-', '-', '-', '-', '0'],
      ['notes', '-', '-', '-', '-', '0'],
    ]);
  });

  it('sets a root, shows it, refuses one the world must not reach and keeps the one it has', async () => {
    expect((await world(['root', 'notes'])).out).toEqual(['notes has no root: kit world root set notes <url> gives it one']);
    const set = await world(['root', 'set', 'notes', vendorUrl, '--refresh-at-most', '1m']);
    expect(set.code, set.err.join('\n')).toBe(0);
    expect(set.out[0]).toBe('the root of notes:');
    expect(valueOf(set.out, 'url')).toBe(vendorUrl);
    expect(valueOf(set.out, 'deploy')).toBe('manual');
    expect(valueOf(set.out, 'refresh at most')).toBe('1m');
    expect(valueOf(set.out, 'refresh every')).toBe("- (the twin's own, if any)");
    expect(set.out.at(-1)).toBe('Next: kit world credential seal notes --bearer-env VAR, then kit world refresh notes');
    expect(JSON.parse((await world(['root', 'notes', '--json'])).text)).toEqual({ url: vendorUrl, deploy: 'manual', refresh: { atMost: '1m' } });

    const metadata = await world(['root', 'set', 'notes', 'http://169.254.169.254/latest']);
    expect(metadata.code).toBe(1);
    expect(metadata.out).toEqual([]);
    expect(metadata.err).toHaveLength(1);
    expect(metadata.err[0]).toMatch(/^kit: 'url' is refused: .* \(destination_refused\)$/);
    const noRoot = await world(['root', 'set', 'hello', 'https://api.hello.test']);
    expect(noRoot.err).toEqual(["kit: Twin 'hello' keeps no copy of a real vendor: its manifest declares no root. (invalid_root)"]);
    const tooOften = await world(['root', 'set', 'notes', vendorUrl, '--refresh-every', '10s']);
    expect(tooOften.code).toBe(1);
    expect(tooOften.err[0]).toMatch(/refresh\.every' is at least 1m.* \(invalid_root\)$/);
    expect((await world(['root', 'set', 'nobody', vendorUrl])).err[0]).toMatch(/\(unknown_twin\)$/);
    expect(JSON.parse((await world(['root', 'notes', '--json'])).text).url).toBe(vendorUrl);
  });

  it('seals the credential from environment variables: the world says it is sealed, the vendor gets it, nothing prints it', async () => {
    expect((await world(['credential', 'notes'])).out).toEqual(['credential of  notes', 'sealed         no', 'since          -']);
    const sealed = await world(['credential', 'seal', 'notes', '--bearer-env', 'NOTES_KEY', '--signing-secret-env', 'NOTES_SIGNING'], { env: ENV });
    expect(sealed.code, sealed.err.join('\n')).toBe(0);
    expect(sealed.out[0]).toMatch(/^kit: sealed the credential of notes at \d{4}-\d\d-\d\dT[\d:.]+Z: the header authorization \(bearer\) and a webhook signing secret$/);
    expect(sealed.out[1]).toBe('The world never shows it again; kit world credential shows that it is sealed.');

    const shown = await world(['credential', 'notes']);
    expect(valueOf(shown.out, 'sealed')).toBe('yes');
    expect(valueOf(shown.out, 'since')).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
    // The world's own answer, not the CLI's reading of it.
    const got = await fetch(`${server.worldUrl.replace('/local/roots', '/-/local/roots')}/twins/notes/credential`, { headers: { 'x-kit-token': tokens.token } });
    expect(await got.json()).toEqual({ sealed: true, sealedAt: valueOf(shown.out, 'since') });

    const refreshed = await world(['refresh', 'notes']);
    expect(refreshed.code, refreshed.err.join('\n')).toBe(0);
    expect(refreshed.out[0]).toBe('kit: refreshed notes from its root');
    expect(valueOf(refreshed.out, 'observed at')).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
    expect([valueOf(refreshed.out, 'reads'), valueOf(refreshed.out, 'entries'), valueOf(refreshed.out, 'written'), valueOf(refreshed.out, 'deleted')]).toEqual(['3', '3', '5', '0']);
    expect(valueOf(refreshed.out, 'duration')).toMatch(/^\d+ ms$/);
    // The world presented the sealed bearer to the vendor on every read.
    expect(presented).toEqual([`Bearer ${SECRET}`, `Bearer ${SECRET}`, `Bearer ${SECRET}`]);

    const row = await twinRow('notes');
    expect(row.slice(0, 2)).toEqual(['notes', vendorUrl]);
    expect(row[2]).toBe(`sealed since ${valueOf(shown.out, 'since')}`);
    expect(row[3]).toBe(`${valueOf(refreshed.out, 'observed at')} ok`);
    expect(row[5]).toBe('3');

    // Every command that shows something of the twin, as a person reads it and as --json.
    for (const argv of [['twins'], ['root', 'notes'], ['credential', 'notes'], ['log', 'notes'], ['timeline'], ['map']]) {
      for (const json of [[], ['--json']]) expect((await world([...argv, ...json])).code, argv.join(' ')).toBe(0);
    }
    const again = await world(['credential', 'seal', 'notes', '--bearer-env', 'NOTES_KEY', '--signing-secret-env', 'NOTES_SIGNING', '--json'], { env: ENV });
    expect(Object.keys(JSON.parse(again.text) as object)).toEqual(['sealed', 'sealedAt']);
    const forced = await world(['refresh', 'notes', '--force', '--json']);
    expect(JSON.parse(forced.text)).toMatchObject({ twin: 'notes', refresh: { ok: true, reads: 3, entries: 0, written: 0, deleted: 0 } });
    const all = printed.join('\n');
    expect(all).toContain('sealed since');
    expect(all).not.toContain(SECRET);
    expect(all).not.toContain(SIGNING);
  });
});

describe('a secret never comes from argv', () => {
  it('a --bearer flag is unknown, and the value given with it is not repeated; nothing is sealed', async () => {
    for (const argv of [['--bearer', WRONG], [`--bearer=${WRONG}`], ['--signing-secret', WRONG], ['--header', `authorization=Bearer ${WRONG}`]]) {
      const r = await world(['credential', 'seal', 'hello', ...argv]);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err[0]).toBe(`kit: unknown flag ${(argv[0] as string).split('=')[0]}`);
      expect(r.err.join('\n')).not.toContain(WRONG);
    }
    expect(valueOf((await world(['credential', 'hello'])).out, 'sealed')).toBe('no');
  });

  it('a variable that is not set or empty, a secret where the name goes, no source at all: bad usage, nothing sent', async () => {
    const unset = await world(['credential', 'seal', 'hello', '--bearer-env', 'HELLO_KEY'], { env: ENV });
    expect(unset.code).toBe(2);
    expect(unset.err[0]).toBe('kit: --bearer-env names HELLO_KEY, which is not set in the environment: export HELLO_KEY=… first (kit never takes the secret itself on the command line)');
    const empty = await world(['credential', 'seal', 'hello', '--header-env', 'x-api-key=EMPTY'], { env: ENV });
    expect(empty.code).toBe(2);
    expect(empty.err[0]).toBe('kit: --header-env names EMPTY, which is empty');
    // Someone typed the secret where the variable's name goes: refused, and not repeated.
    const typed = await world(['credential', 'seal', 'hello', '--signing-secret-env', 'whsec_typed_in_place'], { env: ENV });
    expect(typed.code).toBe(2);
    expect(typed.err[0]).toMatch(/^kit: --signing-secret-env takes the name of an environment variable/);
    expect(typed.err.join('\n')).not.toContain('whsec_typed_in_place');
    const malformed = await world(['credential', 'seal', 'hello', '--header-env', `x-api-key:${WRONG}`], { env: ENV });
    expect(malformed.code).toBe(2);
    expect(malformed.err.join('\n')).not.toContain(WRONG);
    const none = await world(['credential', 'seal', 'hello']);
    expect(none.code).toBe(2);
    expect(none.err[0]).toBe('kit: kit world credential seal needs --bearer-env VAR, --header-env NAME=VAR, --signing-secret-env VAR or --stdin (never the secret itself)');
    expect(none.err.join('\n')).toContain('Usage: kit world credential seal <name> [--bearer-env VAR] [--header-env NAME=VAR]... [--signing-secret-env VAR] [--stdin]');
    expect(valueOf((await world(['credential', 'hello'])).out, 'sealed')).toBe('no');
  });

  it('--stdin seals the credential JSON piped in, alone; the world refuses what is not a credential without repeating it', async () => {
    expect((await world(['credential', 'seal', 'hello', '--stdin', '--bearer-env', 'NOTES_KEY'], { env: ENV, stdin: '{}' })).err[0]).toBe('kit: --stdin reads the whole credential: it takes no --bearer-env, --header-env or --signing-secret-env');
    expect((await world(['credential', 'seal', 'hello', '--stdin'], { stdin: ' \n' })).err[0]).toBe('kit: --stdin read nothing: pipe the credential in as JSON, { "bearer": "…" }');
    const notJson = await world(['credential', 'seal', 'hello', '--stdin'], { stdin: `{ "bearer": "${OTHER}"` });
    expect(notJson.code).toBe(1);
    expect(notJson.err).toEqual(['kit: Send the credential as JSON: { headers?, bearer?, signingSecret? }. (invalid_json)']);
    const badHeader = await world(['credential', 'seal', 'hello', '--stdin'], { stdin: JSON.stringify({ headers: { 'x-api-key': `${OTHER}\r\nx-evil: 1` } }) });
    expect(badHeader.err[0]).toMatch(/\(invalid_credential\)$/);
    const tooLarge = await world(['credential', 'seal', 'hello', '--stdin'], { stdin: JSON.stringify({ headers: { 'x-pad': 'a'.repeat(20_000) } }) });
    expect(tooLarge.err).toEqual(['kit: standard input holds more than 16 KiB; a credential is at most 16 KiB of JSON (credential_too_large)']);
    expect(valueOf((await world(['credential', 'hello'])).out, 'sealed')).toBe('no');

    const sealed = await world(['credential', 'seal', 'hello', '--stdin'], { stdin: JSON.stringify({ headers: { 'X-Api-Key': OTHER, 'x-api-version': '2' } }) });
    expect(sealed.code, sealed.err.join('\n')).toBe(0);
    expect(sealed.out[0]).toMatch(/^kit: sealed the credential of hello at [\dTZ:.-]+: the headers x-api-key, x-api-version$/);
    expect(valueOf((await world(['credential', 'hello'])).out, 'sealed')).toBe('yes');
    const removed = await world(['credential', 'remove', 'hello']);
    expect(removed).toMatchObject({ code: 0, out: ['kit: removed the credential sealed for hello'], err: [] });
    expect(valueOf((await world(['credential', 'hello'])).out, 'sealed')).toBe('no');
    expect(printed.join('\n')).not.toContain(OTHER);
  });
});

describe('a refresh that fails', () => {
  it("exits 1 with the world's code, says what it did before failing, and shows in kit world twins; the secret it failed with is never printed", async () => {
    expect((await world(['credential', 'seal', 'notes', '--bearer-env', 'WRONG_KEY'], { env: ENV })).code).toBe(0);
    const failed = await world(['refresh', 'notes', '--force']);
    expect(failed.code).toBe(1);
    expect(failed.out).toEqual([]);
    expect(failed.err).toHaveLength(1);
    expect(failed.err[0]).toMatch(/^kit: the refresh of notes failed after 1 read \(nothing written\): The twin's root\.read threw on \/v1\/notes \(answered 401\): .* \(refresh_failed\)$/);
    // The vendor repeated the key it was sent; the world hid it.
    expect(failed.err[0]).toContain('[sealed]');
    expect(failed.err[0]).not.toContain(WRONG);
    const asJson = await world(['refresh', 'notes', '--force', '--json']);
    expect(asJson.code).toBe(1);
    expect(asJson.err[0]).toMatch(/\(refresh_failed\)$/);

    const row = await twinRow('notes');
    expect(row[3]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z failed \(refresh_failed\)$/);
    const status = JSON.parse((await world(['twins', '--json'])).text) as { twins: { vendor: string; lastRefresh: { ok: boolean }; lastRefreshAttempt: { ok: boolean; error: { code: string } } }[] };
    const notes = status.twins.find((t) => t.vendor === 'notes');
    expect(notes).toMatchObject({ lastRefresh: { ok: true }, lastRefreshAttempt: { ok: false, error: { code: 'refresh_failed' } } });
    expect(printed.join('\n')).not.toContain(WRONG);
  });

  it('a refresh too soon says when to retry (Retry-After); --force goes through', async () => {
    expect((await world(['credential', 'seal', 'notes', '--bearer-env', 'NOTES_KEY'], { env: ENV })).code).toBe(0);
    const throttled = await world(['refresh', 'notes']);
    expect(throttled.code).toBe(1);
    // The world's clock is frozen in this test: the 1m throttle has all its 60 seconds to go.
    expect(throttled.err).toHaveLength(1);
    expect(throttled.err[0]).toMatch(/^kit: notes was refreshed less than its refresh\.atMost ago; try again in 60 seconds \(after \d{4}-\d\d-\d\dT[\d:.]+Z\), or refresh now with --force \(refresh_throttled\)$/);
    expect((await world(['refresh', 'notes', '--force'])).code).toBe(0);
  });

  it('no root, no such twin, the read token: refused with the code', async () => {
    const noRoot = await world(['refresh', 'hello']);
    expect(noRoot.code).toBe(1);
    expect(noRoot.err).toEqual(['kit: hello has no root: kit world root set hello <url> gives it one (no_root)']);
    expect((await world(['refresh', 'nobody'])).err[0]).toMatch(/\(unknown_twin\)$/);
    const read = await world(['refresh', 'notes'], { token: tokens.readToken });
    expect(read.code).toBe(1);
    expect(read.err[0]).toMatch(/\(forbidden\)$/);
    // The read token lists the twins.
    expect((await world(['twins'], { token: tokens.readToken })).code).toBe(0);
  });

  it('a cleared root refreshes no more; the records it copied stay', async () => {
    const cleared = await world(['root', 'clear', 'notes']);
    expect(cleared).toMatchObject({ code: 0, out: ['kit: cleared the root of notes; the records it copied stay'], err: [] });
    expect((await world(['root', 'notes'])).out).toEqual(['notes has no root: kit world root set notes <url> gives it one']);
    expect((await twinRow('notes')).slice(1, 4)).toEqual(['-', expect.stringMatching(/^sealed since /), '-']);
    expect((await world(['refresh', 'notes'])).err).toEqual(['kit: notes has no root: kit world root set notes <url> gives it one (no_root)']);
    expect((await world(['map'])).out.find((l) => l.startsWith('notes '))).toMatch(/note 5/);
  });
});

describe('links', () => {
  it('are set, forward with the credential sealed for them, are listed, and removed with it', async () => {
    expect((await world(['links'])).out).toEqual(['local/roots has no links']);
    const set = await world(['link', 'set', 'notes-live', vendorUrl]);
    expect(set.code, set.err.join('\n')).toBe(0);
    expect(set.out).toEqual([`kit: ${server.worldUrl}/notes-live/… forwards to ${vendorUrl}`, 'It forwards with the credential sealed for it: kit world credential seal notes-live --bearer-env VAR']);
    expect((await world(['credential', 'seal', 'notes-live', '--bearer-env', 'NOTES_KEY'], { env: ENV })).code).toBe(0);

    const list = await world(['links']);
    expect(list.out[0]).toMatch(/^NAME +ORIGIN +CREDENTIAL +CREATED$/);
    const cells = (list.out[1] as string).split(/ {2,}/);
    expect(cells.slice(0, 2)).toEqual(['notes-live', vendorUrl]);
    expect(cells[2]).toMatch(/^sealed since \d{4}-/);
    expect(JSON.parse((await world(['links', '--json'])).text)).toMatchObject({ links: [{ name: 'notes-live', origin: vendorUrl, credential: { sealed: true } }] });

    // The vendor takes only the sealed key: the link presented it over the app's.
    const forwarded = await fetch(`${server.worldUrl}/notes-live/v1/other`, { headers: { 'x-kit-token': tokens.token, authorization: 'Bearer app-key' } });
    expect(forwarded.status).toBe(200);
    expect(await forwarded.json()).toEqual({ path: '/v1/other' });

    expect((await world(['link', 'set', 'notes', 'https://api.notes.test'])).err[0]).toMatch(/\(link_names_twin\)$/);
    expect((await world(['link', 'set', 'Bad', 'https://api.notes.test'])).err[0]).toMatch(/\(invalid_link\)$/);
    expect((await world(['link', 'set', 'metadata', 'http://169.254.169.254'])).err[0]).toMatch(/\(destination_refused\)$/);

    const removed = await world(['link', 'remove', 'notes-live']);
    expect(removed).toMatchObject({ code: 0, out: ['kit: removed link notes-live and the credential sealed for it'], err: [] });
    expect((await world(['credential', 'notes-live'])).err[0]).toMatch(/\(unknown_twin\)$/);
    expect((await world(['link', 'remove', 'notes-live'])).err).toEqual(["kit: This world has no link 'notes-live'. (unknown_link)"]);
    expect((await world(['links'])).out).toEqual(['local/roots has no links']);
    expect(printed.join('\n')).not.toContain(SECRET);
  });
});

describe('usage', () => {
  it('bad flags of root set: a line and the usage, exit 2', async () => {
    const deploy = await world(['root', 'set', 'notes', vendorUrl, '--deploy', 'sometimes']);
    expect(deploy.code).toBe(2);
    expect(deploy.err[0]).toBe('kit: --deploy is auto or manual, got "sometimes"');
    expect(deploy.err.slice(2).join('\n')).toMatch(/^Usage: kit world root set <vendor> <url> \[--deploy auto\|manual\] \[--refresh-at-most D\] \[--refresh-every D\] \[flags\]\n/);
    expect((await world(['root', 'set', 'notes', vendorUrl, '--refresh-at-most', 'soon'])).err[0]).toBe('kit: --refresh-at-most is a duration like 30s, 15m, 1h or 1d, got "soon"');
    expect((await world(['link'])).err[0]).toBe('kit: name a command: kit world link set|remove');
    expect((await world(['root', 'notes'])).out[0]).toBe('notes has no root: kit world root set notes <url> gives it one');
  });

  it('the help names every command, and seal says why no secret goes on the command line', async () => {
    const help = (await kit(['world', '--help'])).text;
    for (const name of ['kit world twins', 'kit world root <vendor>', 'kit world root set <vendor> <url>', 'kit world root clear <vendor>', 'kit world credential <name>', 'kit world credential seal <name>', 'kit world credential remove <name>', 'kit world refresh <vendor> [--force]', 'kit world links', 'kit world link set <name> <origin>', 'kit world link remove <name>']) {
      expect(help).toContain(name);
    }
    const seal = (await kit(['world', 'credential', 'seal', '--help'])).text;
    expect(seal).toContain("No flag takes a secret's value: one on the command line shows in `ps` and the shell's history.");
    expect(seal).toContain('--header-env NAME=VAR');
  });
});
