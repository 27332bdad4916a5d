/**
 * `kit host …` and the branch commands of `kit world …` against the multi-world host
 * (started in-process, state in a temporary directory), with the hello and Stripe twins.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMultiWorldHost } from '../../host/index.js';
import type { MultiWorldHost } from '../../host/index.js';
import { buildGuestRuntime, loadBuiltinTwins } from '../twin/node.js';
import { kit } from '../../test/helpers/kit-cli.js';
import { HOST_USAGE, USAGE } from './main.js';
import { HOST_COMMANDS } from './host-commands.js';

describe('kit host help', () => {
  it('kit --help and kit host --help list every host command; each has its own --help', async () => {
    expect((await kit(['host', '--help'])).text).toBe(HOST_USAGE);
    for (const c of HOST_COMMANDS.commands) {
      const name = `kit host ${c.words.join(' ')}`;
      expect(USAGE).toContain(name);
      expect(HOST_USAGE).toContain(name);
      const help = await kit(['host', ...c.words, '--help']);
      expect(help.code).toBe(0);
      expect(help.out[0]?.startsWith(`Usage: ${name}`)).toBe(true);
    }
    expect(HOST_USAGE).toContain('kit host serve [dir]');
  });

  it('says how to name a host when none is given, exit 1; bad usage exits 2', async () => {
    const r = await kit(['host', 'worlds']);
    expect(r.code).toBe(1);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(/^kit: no host named and no .*\.kit-host\/url: pass --url <host url> --token <admin token>, set KIT_HOST and KIT_HOST_TOKEN, .* \(no_host\)$/);
    const noVendors = await kit(['host', 'create', 'acme/shop', '--url', 'http://127.0.0.1:1', '--token', 't']);
    expect(noVendors.code).toBe(2);
    expect(noVendors.err[0]).toBe('kit: kit host create needs --vendors a,b (kit host vendors lists them)');
    expect((await kit(['host', 'rm', 'acme', '--url', 'http://127.0.0.1:1', '--token', 't'])).code).toBe(2);
  });
});

describe('kit host and kit world branch commands against the multi-world host', () => {
  let dir: string;
  let host: MultiWorldHost;
  const admin = (): string[] => ['--url', host.url, '--token', host.adminToken];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kit-host-cli-'));
    const builtins = await loadBuiltinTwins();
    host = await startMultiWorldHost({
      dir,
      twins: [...builtins.values()].filter((t) => t.vendor === 'hello' || t.vendor === 'stripe'),
      guestRuntime: await buildGuestRuntime(),
      budget: false,
    });
  });
  afterAll(async () => {
    await host?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('lists vendors, creates worlds, lists them, and refuses a taken name or an unknown vendor', async () => {
    const vendors = await kit(['host', 'vendors', ...admin()]);
    expect(vendors.code).toBe(0);
    expect(vendors.out).toEqual(expect.arrayContaining(['hello', 'stripe']));

    const made = await kit(['host', 'create', 'acme/shop', '--vendors', 'hello,stripe', '--owner', 'acme', ...admin()]);
    expect(made.code, made.err.join('\n')).toBe(0);
    expect(made.out[0]).toBe('kit: made world acme/shop with hello, stripe');
    expect(made.out).toContain(`  world URL   ${host.url}/acme/shop`);
    expect(made.out).toContain(`  world API   ${host.url}/-/acme/shop`);
    expect(made.text).toMatch(/token +tok_/);

    const json = await kit(['host', 'create', 'acme/other', '--vendors', 'hello', '--json', ...admin()]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.text)).toMatchObject({ org: 'acme', world: 'other', name: 'acme/other', twins: [{ vendor: 'hello' }] });

    const list = await kit(['host', 'worlds', ...admin()]);
    expect(list.code).toBe(0);
    expect(list.out[0]).toMatch(/^NAME +TWINS +BRANCH OF +OWNER +BUDGET +OPEN +EXPIRES$/);
    expect(list.out.find((l) => l.startsWith('acme/shop '))).toMatch(/^acme\/shop +hello,stripe +- +acme /);
    // Tokens stay out of the table.
    expect(list.text).not.toContain('tok_');
    const rows = JSON.parse((await kit(['host', 'worlds', '--json', ...admin()])).text) as { worlds: { name: string; token: string }[] };
    expect(rows.worlds.map((w) => w.name)).toEqual(['acme/other', 'acme/shop']);

    const taken = await kit(['host', 'create', 'acme/shop', '--vendors', 'hello', ...admin()]);
    expect(taken.code).toBe(1);
    expect(taken.err).toHaveLength(1);
    expect(taken.err[0]).toMatch(/^kit: .* \(world_exists\)$/);
    const unknown = await kit(['host', 'create', 'acme/x', '--vendors', 'nope', ...admin()]);
    expect(unknown.code).toBe(1);
    expect(unknown.err[0]).toMatch(/\(unknown_vendor\)$/);
  });

  it('finds the host from the .kit-host/url and .kit-host/admin it writes; a wrong admin token is refused', async () => {
    expect((await kit(['host', 'worlds'], { cwd: dir })).code).toBe(0);
    expect((await kit(['host', 'worlds', '--dir', dir])).code).toBe(0);
    const wrong = await kit(['host', 'worlds', '--url', host.url, '--token', 'tok_wrong']);
    expect(wrong.code).toBe(1);
    expect(wrong.err[0]).toMatch(/\(unauthenticated\)$/);
  });

  it('branches a world at an instant, lists the branch, opens it with its own token, and removes it', async () => {
    const world = JSON.parse((await kit(['host', 'worlds', '--json', ...admin()])).text) as { worlds: { name: string; token: string }[] };
    const shop = world.worlds.find((w) => w.name === 'acme/shop');
    const on = ['--world', `${host.url}/acme/shop`, '--token', shop?.token as string];
    expect((await kit(['world', 'clock', 'set', '2026-05-01T09:00:00Z', ...on])).code).toBe(0);
    const greeting = await fetch(`${host.url}/acme/shop/hello/v1/greetings`, { method: 'POST', headers: { authorization: `Bearer ${shop?.token as string}`, 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=Ada' });
    expect(greeting.status).toBe(200);
    expect((await kit(['world', 'clock', 'advance', '1h', ...on])).code).toBe(0);

    const made = await kit(['world', 'branch', '--at', '2026-05-01T09:30:00Z', '--label', 'try', '--ttl', '3600', ...on]);
    expect(made.code, made.err.join('\n')).toBe(0);
    const name = /^kit: made branch (acme\/shop-try-[0-9a-f]{4}) from acme\/shop$/.exec(made.out[0] ?? '')?.[1];
    expect(name).toBeDefined();
    expect(made.out).toContain(`  world URL   ${host.url}/${name as string}`);
    const token = /token +(tok_\S+)/.exec(made.text)?.[1] as string;

    const branches = await kit(['world', 'branches', ...on]);
    expect(branches.out[0]).toMatch(/^NAME +FROM +AT +CREATED +EXPIRES$/);
    expect(branches.out[1]).toMatch(new RegExp(`^${name as string} +acme/shop +2026-05-01T09:30:00`));
    expect(JSON.parse((await kit(['world', 'branches', '--json', ...on])).text)).toEqual([expect.objectContaining({ name, from: 'acme/shop' })]);

    // The branch is a world of its own: its clock frozen at the cut, the greeting in its map.
    const branch = ['--world', `${host.url}/${name as string}`, '--token', token];
    expect((await kit(['world', 'clock', ...branch])).out[0]).toBe('at      2026-05-01T09:30:00.000Z');
    expect((await kit(['world', 'map', ...branch])).out.find((l) => l.startsWith('hello'))).toMatch(/greeting 1/);

    // A world with a branch is not removed.
    const busy = await kit(['host', 'rm', 'acme/shop', ...admin()]);
    expect(busy.code).toBe(1);
    expect(busy.err[0]).toMatch(/\(world_has_branches\)$/);

    expect((await kit(['world', 'rm', name as string, ...on])).out).toEqual([`kit: removed branch ${name as string}`]);
    expect((await kit(['world', 'branches', ...on])).out).toEqual(['acme/shop has no branches']);
    const gone = await kit(['world', 'rm', name as string, ...on]);
    expect(gone.code).toBe(1);
    expect(gone.err[0]).toMatch(/\(unknown_branch\)$/);
    const bad = await kit(['world', 'branch', '--label', 'Not Valid', ...on]);
    expect(bad.code).toBe(1);
    expect(bad.err[0]).toMatch(/\(invalid_label\)$/);
    const live = await kit(['world', 'branch', '--live', '--at', '2026-05-01T09:30:00Z', ...on]);
    expect(live.code).toBe(1);
    expect(live.err).toEqual([expect.stringMatching(/^kit: .* \(live_branch_needs_now\)$/)]);
  });

  it('rotates a world\'s tokens (the old one opens nothing) and removes the world', async () => {
    const before = JSON.parse((await kit(['host', 'worlds', '--json', ...admin()])).text) as { worlds: { name: string; token: string }[] };
    const old = before.worlds.find((w) => w.name === 'acme/other')?.token as string;
    const rotated = await kit(['host', 'rotate', 'acme/other', ...admin()]);
    expect(rotated.code).toBe(0);
    expect(rotated.out[0]).toBe('kit: new tokens for acme/other; the old ones open nothing now');
    const fresh = /token +(tok_\S+)/.exec(rotated.text)?.[1] as string;
    expect(fresh).not.toBe(old);
    const refused = await kit(['world', 'clock', '--world', `${host.url}/acme/other`, '--token', old]);
    expect(refused.code).toBe(1);
    expect(refused.err[0]).toMatch(/\(unauthenticated\)$/);
    expect((await kit(['world', 'clock', '--world', `${host.url}/acme/other`, '--token', fresh])).code).toBe(0);

    expect((await kit(['host', 'rm', 'acme/other', ...admin()])).out).toEqual(['kit: removed world acme/other']);
    const after = JSON.parse((await kit(['host', 'worlds', '--json', ...admin()])).text) as { worlds: { name: string }[] };
    expect(after.worlds.map((w) => w.name)).toEqual(['acme/shop']);
    const missing = await kit(['host', 'rm', 'acme/other', ...admin()]);
    expect(missing.code).toBe(1);
    expect(missing.err[0]).toMatch(/\(unknown_world\)$/);
  });
});
