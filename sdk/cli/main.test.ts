import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { echoWorld } from '../../host/echo-world.js';
import type { EchoBody, EchoWorld } from '../../host/echo-world.js';
import type { LocalWorldOptions, TwinBundle } from '../../runtime/runner/types.js';
import { main, USAGE, WORLD_USAGE } from './main.js';
import type { CliDeps } from './main.js';
import { SERVE_USAGE, worldNameFromDir } from './serve.js';

function bundle(vendor: string, requestScopes: 'read'[] = []): TwinBundle {
  return {
    vendor,
    source: '',
    manifest: { vendor, version: '1', protocol: 'http', models: { hosts: [], resources: [] }, requestScopes, routes: [], stores: [], moves: [], scenarios: true },
  };
}

interface Harness {
  deps: CliDeps;
  out: string[];
  err: string[];
  opened: LocalWorldOptions[];
  worlds: EchoWorld[];
  stop(signal?: string): void;
  /** Resolves once serve has printed its lines. */
  serving(): Promise<void>;
}

function harness(): Harness {
  const out: string[] = [];
  const err: string[] = [];
  const opened: LocalWorldOptions[] = [];
  const worlds: EchoWorld[] = [];
  let stop: (signal: string) => void = () => {};
  const stopped = new Promise<string>((resolve) => {
    stop = resolve;
  });
  const h: Harness = {
    out,
    err,
    opened,
    worlds,
    stop: (signal = 'SIGTERM') => stop(signal),
    async serving() {
      while (!out.some((l) => l.startsWith('Ctrl-C'))) {
        if (err.length > 0) throw new Error(err.join('\n'));
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    deps: {
      version: '0.1.0',
      loadTwins: async () => new Map([['hello', bundle('hello')], ['gitvendor', bundle('gitvendor', ['read'])]]),
      openWorld: async (o) => {
        opened.push(o);
        const w = echoWorld(o.world, 'cli-code');
        worlds.push(w);
        return w;
      },
      untilStopped: () => stopped,
    },
  };
  return h;
}

function io(h: Harness) {
  return { out: (l: string) => h.out.push(l), err: (l: string) => h.err.push(l) };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kit-cli-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('kit help and usage errors', () => {
  it('prints help for kit --help and kit world serve --help, exit 0', async () => {
    const a = harness();
    expect(await main(['--help'], io(a), a.deps)).toBe(0);
    expect(a.out.join('\n')).toBe(USAGE);
    const b = harness();
    expect(await main(['world', 'serve', '--help'], io(b), b.deps)).toBe(0);
    expect(b.out.join('\n')).toBe(SERVE_USAGE);
    expect(SERVE_USAGE).toContain('--port N');
    expect(SERVE_USAGE).toContain('.kit/world/');
  });

  it('answers a bad flag with one line and the usage, exit 2, and opens nothing', async () => {
    for (const argv of [['world', 'serve', '--bogus'], ['world', 'serve', '--port', 'http'], ['world', 'serve', '--world', 'Not Valid!'], ['world', 'serve', 'a', 'b'], ['world', 'serve', '--port']]) {
      const h = harness();
      expect(await main(argv, io(h), h.deps)).toBe(2);
      expect(h.err[0]).toMatch(/^kit: \S/);
      expect(h.err.slice(2).join('\n')).toBe(SERVE_USAGE);
      expect(h.opened).toHaveLength(0);
    }
    const h = harness();
    expect(await main(['frobnicate'], io(h), h.deps)).toBe(2);
    expect(h.err[0]).toBe('kit: unknown command frobnicate');
    expect(await main([], io(harness()), harness().deps)).toBe(2);
    // `kit world` alone or with an unknown command shows every world command, not serve's flags.
    const w = harness();
    expect(await main(['world', 'bogus'], io(w), w.deps)).toBe(2);
    expect(w.err[0]).toBe('kit: unknown command world bogus');
    expect(w.err.slice(2).join('\n')).toBe(WORLD_USAGE);
    const alone = harness();
    expect(await main(['world'], io(alone), alone.deps)).toBe(2);
    expect(alone.err.slice(2).join('\n')).toBe(WORLD_USAGE);
  });

  it('treats demo as an unknown command (make run serves the demo world)', async () => {
    const h = harness();
    expect(await main(['demo'], io(h), h.deps)).toBe(2);
    expect(h.err[0]).toBe('kit: unknown command demo');
  });
});

describe('kit world serve', () => {
  it('serves the directory with its defaults, prints URL, tokens and state, answers with the token, stops on a signal', async () => {
    const world = join(dir, 'My Shop_2');
    await mkdir(world);
    const h = harness();
    const done = main(['world', 'serve', world, '--port', '0'], io(h), h.deps);
    await h.serving();
    expect(h.opened).toHaveLength(1);
    expect(h.opened[0]).toMatchObject({ dir: world, org: 'local', world: 'my-shop-2' });
    expect(h.opened[0]?.twins.map((t) => t.vendor)).toEqual(['gitvendor', 'hello']);

    const text = h.out.join('\n');
    const file = JSON.parse(await readFile(join(world, '.kit', 'token'), 'utf8')) as { url: string; token: string; readToken: string };
    expect((await stat(join(world, '.kit', 'token'))).mode & 0o777).toBe(0o600);
    expect(file.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/local\/my-shop-2$/);
    expect(text).toContain(`world URL    ${file.url}`);
    expect(text).toContain(`token        ${file.token}`);
    expect(text).toContain(`read token   ${file.readToken}`);
    expect(text).toContain(`${join(world, '.kit', 'world')}/`);
    const api = file.url.replace('/local/', '/-/local/');
    expect(text).toContain(`world API    ${api}`);

    const r = await fetch(`${api}/clock`, { headers: { 'x-kit-token': file.token } });
    expect(r.status).toBe(200);
    expect(((await r.json()) as EchoBody).path).toBe('/clock');
    // The read token may not write to a twin that does not enforce the read scope itself...
    expect((await fetch(`${file.url}/hello/x`, { method: 'POST', headers: { authorization: `Bearer ${file.readToken}` } })).status).toBe(403);
    // ...and reaches one that does, marked read-only.
    const marked = await fetch(`${file.url}/gitvendor/x`, { method: 'POST', headers: { authorization: `Bearer ${file.readToken}` } });
    expect(((await marked.json()) as EchoBody).headers['x-kit-read-only']).toBe('1');

    h.stop('SIGINT');
    expect(await done).toBe(0);
    expect(h.worlds[0]?.closed.at).not.toBeNull();
    expect(h.out.join('\n')).toContain('SIGINT: stopping');
    await expect(fetch(`${api}/clock`)).rejects.toThrow();
  });

  it('keeps the tokens on a restart in the same directory', async () => {
    const first = harness();
    const a = main(['world', 'serve', dir, '--port', '0', '--world', 'Shop', '--org', 'acme'], io(first), first.deps);
    await first.serving();
    first.stop();
    expect(await a).toBe(0);
    const before = JSON.parse(await readFile(join(dir, '.kit', 'token'), 'utf8')) as { token: string; readToken: string; url: string };
    expect(before.url).toMatch(/\/acme\/shop$/);

    const second = harness();
    const b = main(['world', 'serve', dir, '--port=0', '--world=shop', '--org=acme'], io(second), second.deps);
    await second.serving();
    const after = JSON.parse(await readFile(join(dir, '.kit', 'token'), 'utf8')) as { token: string; readToken: string };
    expect([after.token, after.readToken]).toEqual([before.token, before.readToken]);
    expect(second.out.join('\n')).toContain(before.token);
    second.stop();
    expect(await b).toBe(0);
  });

  it('serves only the twins named, and refuses an unknown one with the list, exit 2', async () => {
    const h = harness();
    const done = main(['world', 'serve', dir, '--port', '0', '--twins', 'hello'], io(h), h.deps);
    await h.serving();
    expect(h.opened[0]?.twins.map((t) => t.vendor)).toEqual(['hello']);
    h.stop();
    await done;

    const bad = harness();
    expect(await main(['world', 'serve', dir, '--port', '0', '--twins', 'hello,nope'], io(bad), bad.deps)).toBe(2);
    expect(bad.err[0]).toBe('kit: unknown twin nope; the built-in twins are: gitvendor, hello');
    expect(bad.opened).toHaveLength(0);
  });

  it('serves without a request budget by default; --budget sets one, and a bad one is refused', async () => {
    const tokenOf = async () => (JSON.parse(await readFile(join(dir, '.kit', 'token'), 'utf8')) as { token: string; url: string });
    const h = harness();
    const done = main(['world', 'serve', dir, '--port', '0'], io(h), h.deps);
    await h.serving();
    expect(h.opened[0]?.thread).toBeUndefined();
    expect(h.out.join('\n')).toContain('budget       off');
    let file = await tokenOf();
    const clock = `${file.url.replace('/local/', '/-/local/')}/clock`;
    // A load test's burst is not throttled.
    const statuses = await Promise.all(Array.from({ length: 300 }, () => fetch(clock, { headers: { 'x-kit-token': file.token } }).then((r) => r.status)));
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    h.stop();
    await done;

    const limited = harness();
    const again = main(['world', 'serve', dir, '--port', '0', '--budget', '3/m'], io(limited), limited.deps);
    await limited.serving();
    expect(limited.out.join('\n')).toContain('budget       3/1m, then 429 with Retry-After');
    file = await tokenOf();
    const url = `${file.url.replace('/local/', '/-/local/')}/clock`;
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await fetch(url, { headers: { 'x-kit-token': file.token } }));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(Number(answers[3]?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    limited.stop();
    await again;

    for (const bad of ['lots', '0/10s', '10/0s', '10/2d', '10/10', '-1/s']) {
      const b = harness();
      expect(await main(['world', 'serve', dir, '--port', '0', '--budget', bad], io(b), b.deps)).toBe(2);
      expect(b.err[0]).toContain('--budget');
      expect(b.opened).toHaveLength(0);
    }
  });

  it('accepts --inline, which changes nothing now, and says so', async () => {
    const h = harness();
    const done = main(['world', 'serve', dir, '--port', '0', '--inline'], io(h), h.deps);
    await h.serving();
    expect(h.opened[0]?.thread).toBeUndefined();
    expect(h.out.join('\n')).toContain('--inline is no longer needed');
    h.stop();
    await done;
  });

  it('refuses a corrupt token file without replacing it or opening the world, exit 1', async () => {
    await mkdir(join(dir, '.kit'));
    await writeFile(join(dir, '.kit', 'token'), '{"url": "x", "token": ');
    const h = harness();
    expect(await main(['world', 'serve', dir, '--port', '0'], io(h), h.deps)).toBe(1);
    expect(h.err[0]).toContain('.kit/token is not a token file');
    expect(h.opened).toHaveLength(0);
    expect(await readFile(join(dir, '.kit', 'token'), 'utf8')).toBe('{"url": "x", "token": ');
  });

  it('refuses a directory that does not exist, exit 1', async () => {
    const h = harness();
    expect(await main(['world', 'serve', join(dir, 'missing'), '--port', '0'], io(h), h.deps)).toBe(1);
    expect(h.err[0]).toContain('no directory');
  });

  it('says so when the port is taken, and closes the world it opened', async () => {
    const first = harness();
    const a = main(['world', 'serve', dir, '--port', '0'], io(first), first.deps);
    await first.serving();
    const port = /:(\d+)\//.exec(first.out.find((l) => l.includes('world URL')) ?? '')?.[1];
    const other = await mkdtemp(join(tmpdir(), 'kit-cli-'));
    try {
      const h = harness();
      expect(await main(['world', 'serve', other, '--port', String(port)], io(h), h.deps)).toBe(1);
      expect(h.err[0]).toContain('cannot listen');
      expect(h.worlds[0]?.closed.at).not.toBeNull();
    } finally {
      first.stop();
      await a;
      await rm(other, { recursive: true, force: true });
    }
  });
});

describe('worldNameFromDir', () => {
  it('lower-cases and folds other characters to dashes', () => {
    expect(worldNameFromDir('/x/My Project_1')).toBe('my-project-1');
    expect(worldNameFromDir('/x/--shop--')).toBe('shop');
    expect(worldNameFromDir(`/x/${'a'.repeat(80)}`)).toHaveLength(63);
    expect(() => worldNameFromDir('/x/___')).toThrow(/--world/);
  });
});

describe('kit world serve --trust', () => {
  it('trusts the issuers of --trust and TRUSTED_ISSUERS and says so; trusts none by default; refuses one that is not an issuer (exit 2)', async () => {
    const h = harness();
    h.deps.env = { TRUSTED_ISSUERS: 'https://b.example, http://127.0.0.1:4460' };
    const done = main(['world', 'serve', dir, '--port', '0', '--trust', 'https://platform.example', '--trust', 'http://127.0.0.1:4460'], io(h), h.deps);
    await h.serving();
    expect(h.out).toContain('  passes       signed by https://platform.example, http://127.0.0.1:4460, https://b.example');
    h.stop();
    expect(await done).toBe(0);

    const none = harness();
    none.deps.env = {};
    const plain = main(['world', 'serve', dir, '--port', '0'], io(none), none.deps);
    await none.serving();
    expect(none.out).toContain('  passes       none trusted (--trust <issuer>, docs/passes.md)');
    none.stop();
    await plain;

    for (const [argv, env, said] of [
      [['--trust', 'platform.example'], {}, 'kit: --trust: "platform.example" is not an issuer: name its origin, https://host[:port], with no path'],
      [[], { TRUSTED_ISSUERS: 'http://192.168.1.5:4460' }, 'kit: TRUSTED_ISSUERS: "http://192.168.1.5:4460" is not an issuer: http is for a platform on this machine (localhost, 127.0.0.1); use https'],
    ] as const) {
      const bad = harness();
      bad.deps.env = env;
      expect(await main(['world', 'serve', dir, '--port', '0', ...argv], io(bad), bad.deps)).toBe(2);
      expect(bad.err[0]).toBe(said);
      expect(bad.err.slice(2).join('\n')).toBe(SERVE_USAGE);
      expect(bad.opened).toHaveLength(0);
    }
  });
});
