import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
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
