import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { echoWorld } from '../../host/echo-world.js';
import { loadOrCreateCa } from '../../host/index.js';
import type { TwinBundle } from '../../runtime/runner/types.js';
import { parseAttachManifest } from '../attach/manifest.js';
import { describeServing, serveWorld } from './serve.js';
import { UsageError } from './args.js';
import { ATTACH_USAGE, parseAttachArgs } from './attach.js';
import { main } from './main.js';
import type { CliDeps } from './main.js';

const URL_ = 'http://127.0.0.1:4440/local/shop';

describe('parseAttachArgs', () => {
  it('reads the world URL, --token in either form, and the command with its own flags after -- or without', () => {
    expect(parseAttachArgs([URL_, '--token', 't1', '--', 'node', '--inspect', 'app.js'], {})).toEqual({ worldUrl: URL_, token: 't1', command: 'node', args: ['--inspect', 'app.js'] });
    expect(parseAttachArgs(['--token=t2', `${URL_}/`, 'python3', '-m', 'http.server', '--token', 'x'], {})).toEqual({
      worldUrl: URL_,
      token: 't2',
      command: 'python3',
      args: ['-m', 'http.server', '--token', 'x'],
    });
  });

  it('takes the token from KIT_WORLD_TOKEN when --token is absent', () => {
    expect(parseAttachArgs([URL_, 'env'], { KIT_WORLD_TOKEN: 'from-env' })).toMatchObject({ token: 'from-env', command: 'env' });
  });

  it('answers help', () => {
    expect(parseAttachArgs(['-h'], {})).toBe('help');
    expect(parseAttachArgs([URL_, '--help'], {})).toBe('help');
  });

  it('refuses a token with spaces or control characters (a copied line), and trims one that only ends in a newline', () => {
    expect(() => parseAttachArgs(['http://w/o/x', '--token', 'tok_a\nb', 'node'], {})).toThrow(/spaces or control characters/);
    expect(() => parseAttachArgs(['http://w/o/x', '--token', 'tok a', 'node'], {})).toThrow(/spaces or control characters/);
    expect(parseAttachArgs(['http://w/o/x', '--token', 'tok_abc\n', 'node'], {})).toMatchObject({ token: 'tok_abc' });
  });

  it('refuses what it cannot run with a one-line UsageError', () => {
    const cases: [string[], RegExp][] = [
      [[], /^name the world/],
      [[URL_, '--token', 't'], /^name the command/],
      [[URL_, '--token', 't', '--'], /^name the command/],
      [[URL_, 'node'], /^--token is needed/],
      [[URL_, '--token'], /^--token needs a value/],
      [[URL_, '--token', '--', 'node'], /^--token needs a value/],
      [[URL_, '--tokn', 't', 'node'], /^unknown flag --tokn$/],
      [['not a url', '--token', 't', 'node'], /^the world URL is not a URL/],
      [['ftp://h/x', '--token', 't', 'node'], /^the world URL must be http or https/],
    ];
    for (const [argv, message] of cases) {
      let error: unknown = null;
      try {
        parseAttachArgs(argv, {});
      } catch (e) {
        error = e;
      }
      expect(error, argv.join(' ')).toBeInstanceOf(UsageError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain('\n');
    }
  });
});

describe('kit world attach (usage)', () => {
  const deps = { version: '0', loadTwins: async () => new Map(), openWorld: async () => { throw new Error('not used'); }, untilStopped: () => new Promise<string>(() => {}) } as CliDeps;

  it('prints its help, exit 0', async () => {
    const out: string[] = [];
    expect(await main(['world', 'attach', '--help'], { out: (l) => out.push(l), err: () => {} }, deps)).toBe(0);
    expect(out.join('\n')).toBe(ATTACH_USAGE);
    for (const name of ['HTTPS_PROXY', 'NODE_OPTIONS', 'SSL_CERT_FILE', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE', 'NODE_EXTRA_CA_CERTS', 'SMTP_HOST']) {
      expect(ATTACH_USAGE).toContain(name);
    }
  });

  it('answers a bad flag with one line and the usage, exit 2', async () => {
    const err: string[] = [];
    expect(await main(['world', 'attach', URL_, '--bogus'], { out: () => {}, err: (l) => err.push(l) }, { ...deps, attach: { env: {} } })).toBe(2);
    expect(err[0]).toBe('kit: unknown flag --bogus');
    expect(err.slice(2).join('\n')).toBe(ATTACH_USAGE);
  });

  it('says so when the world cannot be reached, exit 1, without running the command', async () => {
    const err: string[] = [];
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    const code = await main(['world', 'attach', `http://127.0.0.1:${port}/local/shop`, '--token', 't', '--', 'sh', '-c', 'exit 7'], { out: () => {}, err: (l) => err.push(l) }, {
      ...deps,
      attach: { env: {}, attachEntry: import.meta.filename },
    });
    expect(code).toBe(1);
    expect(err).toEqual([`kit: cannot reach the world at http://127.0.0.1:${port}/local/shop/.well-known/kit-world (ECONNREFUSED)`]);
  });
});

describe('kit world serve runs the proxy and serves the manifest', () => {
  const bundle = (vendor: string, hosts: string[], endpointEnv: string[], protocol = 'http'): TwinBundle => ({
    vendor,
    source: '',
    manifest: { vendor, version: '1', protocol, models: { hosts, resources: [], endpointEnv }, requestScopes: [], routes: [], stores: [], moves: [], scenarios: true },
  });
  const serveDeps = {
    loadTwins: async () =>
      new Map([
        ['stripe', bundle('stripe', ['api.stripe.com'], ['STRIPE_API_BASE'])],
        ['smtp', bundle('smtp', [], ['SMTP_HOST', 'SMTP_PORT'], 'smtp')],
      ]),
    openWorld: async (o: { world: string }) => echoWorld(o.world),
  };

  it('keeps one CA in <dir>/.kit/ca across restarts and names it, the proxy and the twins in the manifest', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kit-serve-attach-'));
    try {
      const shas: string[] = [];
      for (let i = 0; i < 2; i++) {
        const serving = await serveWorld({ dir, port: 0, host: '127.0.0.1', org: 'local', world: 'shop' }, serveDeps);
        try {
          expect(serving.server.proxy).not.toBeNull();
          expect(describeServing(serving).join('\n')).toContain(`proxy        ${serving.server.proxy?.url}`);
          const m = parseAttachManifest(await (await fetch(`${serving.server.worldUrl}/.well-known/kit-world`, { headers: { 'x-kit-token': serving.tokens.token } })).json());
          const pem = await readFile(join(dir, '.kit', 'ca', 'ca.pem'), 'utf8');
          expect(m.ca?.pem).toBe(pem);
          expect(m.ca?.sha256).toBe(createHash('sha256').update(new X509Certificate(pem).raw).digest('hex'));
          expect(m.proxy).toEqual({ url: serving.server.proxy?.url, hosts: ['api.stripe.com'] });
          expect(m.hosts).toEqual({ 'api.stripe.com': 'stripe' });
          expect(m.env['STRIPE_API_BASE']).toBe(`${serving.server.worldUrl}/stripe`);
          expect(Object.keys(m.streams)).toEqual(['smtp']);
          shas.push(m.ca?.sha256 ?? '');
        } finally {
          await serving.server.close();
        }
      }
      expect(shas[1]).toBe(shas[0]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('mints a CA that may vouch for the built-in twins\' hosts only, and says so when an older CA cannot serve a twin', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kit-serve-attach-'));
    const older = await mkdtemp(join(tmpdir(), 'kit-serve-attach-'));
    try {
      const serving = await serveWorld({ dir, port: 0, host: '127.0.0.1', org: 'local', world: 'shop', twins: ['smtp'] }, serveDeps);
      await serving.server.close();
      // Stripe is not served, but a later `--twins stripe` from the same folder needs its host.
      expect((await loadOrCreateCa(dir)).hosts).toEqual(['api.stripe.com']);
      expect(serving.uncoveredHosts).toEqual([]);
      expect(serving.caUnconstrained).toBe(false);
      expect(describeServing(serving).join('\n')).not.toContain('note');
      // A CA from before the constraints (ca.test: its hosts are null) is named as such.
      expect(describeServing({ ...serving, caUnconstrained: true })).toContain(
        `  note         the world's CA, minted by an older kit, may vouch for any host to apps that trust it; move ${join(dir, '.kit', 'ca')} away to mint one limited to the twins' hosts`,
      );

      // A CA minted for other hosts (as by a kit before the twin existed) is kept, and the line says what to do.
      await loadOrCreateCa(older, { hosts: ['api.github.com'] });
      const stale = await serveWorld({ dir: older, port: 0, host: '127.0.0.1', org: 'local', world: 'shop' }, serveDeps);
      await stale.server.close();
      expect(stale.uncoveredHosts).toEqual(['api.stripe.com']);
      expect(describeServing(stale)).toContain(
        `  note         the world's CA may not vouch for api.stripe.com: the proxy cannot serve it; move ${join(older, '.kit', 'ca')} away to mint a CA that may (apps that trust the old one must then trust the new one)`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
      await rm(older, { recursive: true, force: true });
    }
  });

  it('says in one line that TMPDIR is not there, without running the command', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kit-serve-attach-'));
    const serving = await serveWorld({ dir, port: 0, host: '127.0.0.1', org: 'local', world: 'shop' }, serveDeps);
    const saved = process.env['TMPDIR'];
    const err: string[] = [];
    try {
      process.env['TMPDIR'] = join(dir, 'not-there');
      const deps = { ...serveDeps, version: '0', untilStopped: () => new Promise<string>(() => {}), attach: { env: {}, attachEntry: import.meta.filename } } as unknown as CliDeps;
      const code = await main(['world', 'attach', serving.server.worldUrl, '--token', serving.tokens.token, '--', 'sh', '-c', 'exit 7'], { out: () => {}, err: (l) => err.push(l) }, deps);
      expect(code).toBe(1);
      expect(err).toEqual([`kit: cannot make a temporary folder in ${join(dir, 'not-there')} (ENOENT); set TMPDIR to a writable folder`]);
    } finally {
      if (saved === undefined) delete process.env['TMPDIR'];
      else process.env['TMPDIR'] = saved;
      await serving.server.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a bad --proxy-port with one line', async () => {
    const err: string[] = [];
    const deps = { ...serveDeps, version: '0', untilStopped: () => new Promise<string>(() => {}) } as unknown as CliDeps;
    expect(await main(['world', 'serve', '--proxy-port', 'x'], { out: () => {}, err: (l) => err.push(l) }, deps)).toBe(2);
    expect(err[0]).toBe('kit: --proxy-port must be a number from 0 to 65535, got "x"');
  });
});
