/**
 * `kit host twin install|list|remove` against the multi-world host (in-process, state in a
 * temporary directory): a twin's folder built and installed, a bundle file replacing it with the
 * host named as an argument and the admin token piped in, the list, the refusals.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMultiWorldHost } from '../../host/index.js';
import type { MultiWorldHost } from '../../host/index.js';
import { buildGuestRuntime, loadBuiltinTwins } from '../twin/node.js';
import { kit } from '../../test/helpers/kit-cli.js';
import { helloBundle, helloCopy } from '../../test/hosts/twin-bundles.js';

describe('kit host twin against the multi-world host', () => {
  let dir: string;
  let host: MultiWorldHost;
  let twin: Awaited<ReturnType<typeof helloCopy>>;
  const admin = (): string[] => ['--url', host.url, '--token', host.adminToken];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kit-host-twin-cli-'));
    twin = await helloCopy('acme', '1.0.0');
    const builtins = await loadBuiltinTwins();
    host = await startMultiWorldHost({ dir, twins: [...builtins.values()].filter((t) => t.vendor === 'hello'), guestRuntime: await buildGuestRuntime(), budget: false });
  }, 60_000);
  afterAll(async () => {
    await host?.close();
    await twin?.remove();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it("installs a twin's folder (built here), lists it beside the built-in ones, and a world made with it answers", async () => {
    const installed = await kit(['host', 'twin', 'install', twin.dir, ...admin()]);
    expect(installed.err).toEqual([]);
    expect(installed.code).toBe(0);
    expect(installed.out[0]).toMatch(new RegExp(`^kit: installed twin acme 1\\.0\\.0 on ${host.url} \\(sha256 [0-9a-f]{12}\\)$`));
    const list = await kit(['host', 'twin', 'list', ...admin()]);
    expect(list.code).toBe(0);
    expect(list.out.find((l) => l.startsWith('acme '))).toMatch(/^acme\s+1\.0\.0\s+installed\s+[0-9a-f]{12}\s+\S+/);
    expect(list.out.find((l) => l.startsWith('hello '))).toMatch(/^hello\s+\S+\s+built-in\s+-/);
    expect((await kit(['host', 'vendors', ...admin()])).out).toEqual(['acme', 'hello']);
    const made = await kit(['host', 'create', 'byot/shop', '--vendors', 'acme', '--json', ...admin()]);
    expect(made.code).toBe(0);
    const w = JSON.parse(made.text) as { name: string; token: string };
    const answer = await fetch(`${host.url}/${w.name}/acme/v1/greetings`, { method: 'POST', headers: { authorization: `Bearer ${w.token}`, 'content-type': 'application/json' }, body: '{"name":"Ada"}' });
    expect(answer.status).toBe(200);
  }, 60_000);

  it('replaces it with a bundle file, the host named as an argument and the admin token piped in; the vendor is read from the bundle', async () => {
    const file = join(dir, 'acme.js');
    await writeFile(file, await helloBundle('acme', '2.0.0'));
    const replaced = await kit(['host', 'twin', 'install', host.url, file, '--stdin'], { stdin: `${host.adminToken}\n` });
    expect(replaced.err).toEqual([]);
    expect(replaced.out[0]).toMatch(/^kit: replaced twin acme 2\.0\.0 on /);
    const rows = JSON.parse((await kit(['host', 'twin', 'list', '--json', ...admin()])).text) as { twins: { vendor: string; version: string }[] };
    expect(rows.twins.find((r) => r.vendor === 'acme')).toMatchObject({ version: '2.0.0' });
    const both = await kit(['host', 'twin', 'install', host.url, file, ...admin()]);
    expect(both.code).toBe(2);
    expect(both.err[0]).toBe('kit: --url and the host URL argument both give the url: give one');
  }, 60_000);

  it('refusals: a file that is not a twin, a folder with no twin, removal while a world serves it; then removed', async () => {
    const junk = join(dir, 'junk.js');
    await writeFile(junk, 'var nothing = 1;');
    const bad = await kit(['host', 'twin', 'install', junk, ...admin()]);
    expect(bad.code).toBe(1);
    expect(bad.err[0]).toMatch(/exports no twin.*\(invalid_twin\)$/);
    const forced = await kit(['host', 'twin', 'install', junk, '--vendor', 'junk', ...admin()]);
    expect(forced.code).toBe(1);
    expect(forced.err[0]).toMatch(/^kit: .*installed twin junk.*\(invalid_twin\)$/);
    const empty = await kit(['host', 'twin', 'install', dir, ...admin()]);
    expect(empty.code).toBe(1);
    expect(empty.err[0]).toMatch(/has no twin\/index\.ts.*\(invalid_twin\)$/);
    const busy = await kit(['host', 'twin', 'remove', 'acme', ...admin()]);
    expect(busy.code).toBe(1);
    expect(busy.err[0]).toMatch(/acme is served by the world byot\/shop.*\(twin_in_use\)$/);
    expect((await kit(['host', 'rm', 'byot/shop', ...admin()])).code).toBe(0);
    const removed = await kit(['host', 'twin', 'remove', 'acme', ...admin()]);
    expect(removed.out).toEqual([`kit: removed twin acme from ${host.url}`]);
    expect((await kit(['host', 'vendors', ...admin()])).out).toEqual(['hello']);
  }, 60_000);
});
