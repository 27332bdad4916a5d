/**
 * `kit edge dev` as a developer runs it: the flags it refuses, the admin token it mints once
 * into the persist folder and reuses (or takes from ADMIN_TOKEN, checked), what it prints, and
 * the edge variant itself in workerd (the built Worker, dist/edge/) reached through the URL and
 * token it printed, its worlds kept across two runs on one persist folder.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEdgeDev, type EdgeDev, type EdgeDevOptions } from '../../host/edge/dev.js';
import { DEFAULT_EDGE_PORT, EDGE_DEV_USAGE, parseEdgeDevArgs, runEdgeDev, type EdgeDevDeps } from './edge-dev.js';
import { main } from './main.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'kit-edge-cli-'));
  dirs.push(d);
  return d;
}

interface Run {
  code: number;
  out: string[];
  err: string[];
  /** What startEdge was asked for, when it was reached. */
  started: EdgeDevOptions | null;
}

/** `kit edge dev <argv>` with an edge that only records how it was started, stopped at once. */
async function runFake(argv: string[], env: Record<string, string | undefined> = {}, fail?: Error): Promise<Run> {
  const run: Run = { code: -1, out: [], err: [], started: null };
  const deps: EdgeDevDeps = {
    startEdge: async (options) => {
      run.started = options;
      if (fail !== undefined) throw fail;
      const edge: EdgeDev = { url: `http://127.0.0.1:${options.port === 0 ? 40123 : options.port}`, adminToken: options.adminToken, miniflare: null as never, restart: async () => undefined, close: async () => undefined };
      return edge;
    },
    untilStopped: async () => 'SIGINT',
  };
  run.code = await runEdgeDev(argv, { out: (l) => run.out.push(l), err: (l) => run.err.push(l) }, deps, env);
  return run;
}

const tokenOf = (out: string[]): string => /admin token\s+(\S+)/.exec(out.join('\n'))![1]!;

describe('kit edge dev', () => {
  it('refuses bad flags with a one-line reason and the usage (exit 2), before starting anything', async () => {
    for (const argv of [['--port', 'x'], ['--port', '70000'], ['--port', '-1'], ['--port', ''], ['a'], ['--nope'], ['--persist', ''], ['--persist='], ['--host', '']]) {
      const r = await runFake(argv);
      expect([argv.join(' '), r.code, r.started]).toEqual([argv.join(' '), 2, null]);
      expect(r.err[0]).toMatch(/^kit: \S/);
      expect(r.err).toContain(EDGE_DEV_USAGE);
      expect(r.out).toEqual([]);
    }
    expect(parseEdgeDevArgs([])).toEqual({ port: DEFAULT_EDGE_PORT, host: '127.0.0.1', persist: null });
    expect(parseEdgeDevArgs(['--port', '0', '--host', '0.0.0.0', '--persist', 'd'])).toEqual({ port: 0, host: '0.0.0.0', persist: 'd' });
    const help = await runFake(['--help']);
    expect([help.code, help.out, help.started]).toEqual([0, [EDGE_DEV_USAGE], null]);
    // Through kit itself: `kit edge` names its one command.
    for (const argv of [['edge'], ['edge', 'serve']]) {
      const err: string[] = [];
      const code = await main(argv, { out: () => {}, err: (l) => err.push(l) }, { version: 'test', untilStopped: () => new Promise(() => {}), loadTwins: () => Promise.reject(new Error('unused')), openWorld: () => Promise.reject(new Error('unused')), startEdge: () => Promise.reject(new Error('not reached')) });
      expect([argv.join(' '), code, err.at(-1)]).toEqual([argv.join(' '), 2, EDGE_DEV_USAGE]);
    }
  });

  it('mints the admin token once into <persist>/admin and reuses it; without --persist, one for this run only', async () => {
    const dir = join(tempDir(), 'state');
    const first = await runFake(['--persist', dir]);
    expect(first.code).toBe(0);
    const token = tokenOf(first.out);
    expect(token).toMatch(/^tok_a_[A-Za-z0-9_-]{32}$/);
    expect(first.out.join('\n')).toContain(`(${join(dir, 'admin')} (minted now))`);
    expect(readFileSync(join(dir, 'admin'), 'utf8')).toBe(`${token}\n`);
    expect(statSync(join(dir, 'admin')).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(first.started).toEqual({ port: DEFAULT_EDGE_PORT, host: '127.0.0.1', adminToken: token, persist: join(dir, 'objects') });

    const second = await runFake(['--persist', dir, '--port', '0']);
    expect(tokenOf(second.out)).toBe(token);
    expect(second.out.join('\n')).toContain(`(${join(dir, 'admin')})`);
    expect(second.out.join('\n')).not.toContain('minted now');

    const loose = [await runFake([]), await runFake([])];
    expect(loose.map((r) => r.started?.persist)).toEqual([undefined, undefined]);
    expect(loose[0]!.out.join('\n')).toContain('(minted now, gone when this stops)');
    expect(tokenOf(loose[0]!.out)).not.toBe(tokenOf(loose[1]!.out));

    // A file that holds no token is not taken, nor replaced.
    writeFileSync(join(dir, 'admin'), 'not a token\n');
    const bad = await runFake(['--persist', dir]);
    expect([bad.code, bad.started, bad.err]).toEqual([1, null, [`kit: ${join(dir, 'admin')} does not hold an admin token; remove it to mint another`]]);
    expect(readFileSync(join(dir, 'admin'), 'utf8')).toBe('not a token\n');
    // --persist naming a file.
    const file = join(tempDir(), 'file');
    writeFileSync(file, '');
    const notDir = await runFake(['--persist', file]);
    expect([notDir.code, notDir.started]).toEqual([1, null]);
    expect(notDir.err[0]).toMatch(/^kit: /);
  });

  it('takes ADMIN_TOKEN from the environment when it is 24 to 256 URL-safe characters, and refuses it otherwise', async () => {
    const dir = tempDir();
    const given = `from-env_${'x'.repeat(20)}`;
    const ok = await runFake(['--persist', dir], { ADMIN_TOKEN: given });
    expect([ok.code, ok.started?.adminToken, tokenOf(ok.out)]).toEqual([0, given, given]);
    expect(ok.out.join('\n')).toContain(`admin token  ${given}  (ADMIN_TOKEN)`);
    // Not written where a minted one would be kept.
    expect(() => statSync(join(dir, 'admin'))).toThrow();
    for (const bad of ['short', 'x'.repeat(23), 'x'.repeat(257), `${'x'.repeat(30)}.dot`, `${'x'.repeat(30)} `]) {
      const r = await runFake([], { ADMIN_TOKEN: bad });
      expect([bad.length, r.code, r.started, r.err[0]]).toEqual([bad.length, 2, null, 'kit: ADMIN_TOKEN must be 24 to 256 URL-safe characters (A-Z a-z 0-9 - _)']);
      expect(r.err).toContain(EDGE_DEV_USAGE);
    }
    // Set but empty: as if unset.
    const empty = await runFake([], { ADMIN_TOKEN: '' });
    expect([empty.code, empty.out.join('\n')]).toEqual([0, expect.stringContaining('(minted now, gone when this stops)')]);
  });

  it('prints where it serves, the admin token, where state is kept and how to make a world; says why it could not start', async () => {
    const dir = tempDir();
    const r = await runFake(['--persist', dir, '--port', '0'], { ADMIN_TOKEN: `tok_a_${'p'.repeat(30)}` });
    const token = `tok_a_${'p'.repeat(30)}`;
    expect(r.out).toEqual([
      'kit: serving the edge variant in workerd (miniflare)',
      '',
      '  URL          http://127.0.0.1:40123',
      `  admin token  ${token}  (ADMIN_TOKEN)`,
      `  state        ${join(dir, 'objects')}/`,
      '  passes       none trusted (--trust <issuer>, docs/passes.md)',
      '',
      'Try:',
      `  curl -H "x-kit-token: ${token}" -d '{"org":"acme","world":"shop","vendors":["stripe"]}' http://127.0.0.1:40123/-/worlds`,
      '',
      'Ctrl-C stops it.',
      'kit: SIGINT, stopping',
    ]);
    expect((await runFake([])).out[4]).toBe('  state        in memory (--persist dir keeps it)');
    const busy = await runFake([], {}, new Error('listen EADDRINUSE: address already in use 127.0.0.1:8787'));
    expect([busy.code, busy.err]).toEqual([1, ['kit: listen EADDRINUSE: address already in use 127.0.0.1:8787; pass --port 0 for a free port']]);
    const failed = await runFake(['--port', '0'], {}, new Error('no built Worker at x'));
    expect([failed.code, failed.err]).toEqual([1, ['kit: no built Worker at x']]);
  });

  it('trusts the issuers of --trust and TRUSTED_ISSUERS, handing them to the Worker, and refuses one that is not an issuer (exit 2)', async () => {
    const r = await runFake(['--port', '0', '--trust', 'https://platform.example', '--trust', 'http://127.0.0.1:4460/'], { TRUSTED_ISSUERS: 'https://b.example, https://platform.example' });
    expect(r.code).toBe(0);
    // EdgeDevOptions.trustedIssuers: the Worker's TRUSTED_ISSUERS (host/edge/dev.ts).
    expect((r.started as { trustedIssuers?: unknown } | null)?.trustedIssuers).toEqual(['https://platform.example', 'http://127.0.0.1:4460', 'https://b.example']);
    expect(r.out).toContain('  passes       signed by https://platform.example, http://127.0.0.1:4460, https://b.example');
    expect(parseEdgeDevArgs(['--trust', 'https://platform.example'])).toEqual({ port: DEFAULT_EDGE_PORT, host: '127.0.0.1', persist: null, trustedIssuers: ['https://platform.example'] });
    for (const [argv, env, said] of [
      [['--trust', 'http://platform.example'], {}, 'kit: --trust: "http://platform.example" is not an issuer: http is for a platform on this machine (localhost, 127.0.0.1); use https'],
      [[], { TRUSTED_ISSUERS: 'https://ok.example platform.example' }, 'kit: TRUSTED_ISSUERS: "platform.example" is not an issuer: name its origin, https://host[:port], with no path'],
    ] as const) {
      const bad = await runFake([...argv], env);
      expect([bad.code, bad.started, bad.err[0]]).toEqual([2, null, said]);
    }
  });

  it('runs the edge variant in workerd: a world made through the printed URL and token, kept by --persist across runs', async () => {
    const dir = tempDir();
    const run = async () => {
      const out: string[] = [];
      let stop: (signal: string) => void = () => {};
      const stopped = new Promise<string>((resolve) => (stop = resolve));
      const done = runEdgeDev(['--port', '0', '--persist', dir], { out: (l) => out.push(l), err: (l) => out.push(`ERR ${l}`) }, { startEdge: startEdgeDev, untilStopped: () => stopped }, {});
      while (!out.includes('Ctrl-C stops it.')) {
        if (out.some((l) => l.startsWith('ERR'))) throw new Error(out.join('\n'));
        await new Promise((r) => setTimeout(r, 20));
      }
      const url = /URL\s+(\S+)/.exec(out.join('\n'))![1]!;
      const token = tokenOf(out);
      const made = await fetch(`${url}/-/worlds`, { method: 'POST', headers: { 'x-kit-token': token }, body: JSON.stringify({ org: 'acme', world: 'shop', vendors: ['hello'] }) });
      const ping = await (await fetch(`${url}/-/ping`)).json();
      stop('SIGINT');
      return { url, token, made: made.status, ping, code: await done, out };
    };
    const first = await run();
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect([first.made, first.ping, first.code, first.out.at(-1)]).toEqual([201, { ok: true, worlds: ['acme/shop'] }, 0, 'kit: SIGINT, stopping']);
    const second = await run();
    expect(second.token).toBe(first.token);
    // The world made in the first run is there: the name is taken.
    expect([second.made, second.ping, second.code]).toEqual([409, { ok: true, worlds: ['acme/shop'] }, 0]);
  }, 60_000);
});
