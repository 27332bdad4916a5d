import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from './client.js';
import { findHost, worldUrls } from './targets.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kit-targets-'));
  await mkdir(join(dir, '.kit-host'));
  await writeFile(join(dir, '.kit-host', 'url'), 'http://127.0.0.1:4450\n');
  await writeFile(join(dir, '.kit-host', 'admin'), 'tok_admin_secret\n', { mode: 0o600 });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  const e = await p.then(() => null, (x: unknown) => x);
  expect(e).toBeInstanceOf(CliError);
  return (e as CliError).code;
}

describe('worldUrls', () => {
  it('derives {world_api} from {world_url} and the other way, under a path prefix too', () => {
    const expected = { worldUrl: 'http://h:1/local/shop', worldApi: 'http://h:1/-/local/shop', base: 'http://h:1', name: 'local/shop' };
    expect(worldUrls('http://h:1/local/shop')).toEqual(expected);
    expect(worldUrls('http://h:1/-/local/shop/')).toEqual(expected);
    expect(worldUrls('https://x.test/kit/acme/shop')).toEqual({ worldUrl: 'https://x.test/kit/acme/shop', worldApi: 'https://x.test/kit/-/acme/shop', base: 'https://x.test/kit', name: 'acme/shop' });
  });

  it('refuses what names no world', () => {
    for (const bad of ['http://h:1', 'http://h:1/only', 'ftp://h/a/b', 'not a url', 'http://h:1/Acme/Shop']) expect(() => worldUrls(bad)).toThrow(CliError);
  });
});

describe('findHost', () => {
  it('reads .kit-host/url and .kit-host/admin, flags and the environment first', async () => {
    expect(await findHost({}, { env: {}, cwd: dir })).toEqual({ base: 'http://127.0.0.1:4450', token: 'tok_admin_secret', from: 'host directory' });
    expect(await findHost({}, { env: { KIT_HOST: 'http://h:2/', KIT_HOST_TOKEN: 't' }, cwd: dir })).toEqual({ base: 'http://h:2', token: 't', from: 'environment' });
    expect(await findHost({ url: 'http://127.0.0.1:4450/' }, { env: {}, cwd: dir })).toMatchObject({ token: 'tok_admin_secret', from: 'flags' });
    expect(await findHost({ dir }, { env: { KIT_HOST: 'http://h:2', KIT_HOST_TOKEN: 't' }, cwd: '/' })).toMatchObject({ base: 'http://127.0.0.1:4450', token: 'tok_admin_secret' });
  });

  it("never sends the directory's admin token to another host, and says how to give one", async () => {
    expect(await codeOf(findHost({ url: 'http://elsewhere.test' }, { env: {}, cwd: dir }))).toBe('no_host');
    expect(await codeOf(findHost({}, { env: {}, cwd: join(dir, 'nothing') }))).toBe('no_host');
    expect(await codeOf(findHost({ url: 'http://h', token: 'two words' }, { env: {}, cwd: dir }))).toBe('bad_token');
  });
});
