/**
 * `kit host serve` as an operator runs it: the flags it refuses, what it prints, the admin
 * token it keeps across restarts, and a clean stop.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startMultiWorldHost } from '../../host/index.js';
import { buildGuestRuntime, loadBuiltinTwins } from '../twin/build.js';
import { HOST_SERVE_USAGE, parseHostServeArgs, runHostServe } from './host-serve.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('kit host serve', () => {
  it('refuses bad flags with a one-line reason and the usage (exit 2)', async () => {
    for (const argv of [['--port', 'x'], ['--budget', 'lots'], ['--max-open', '0'], ['--idle', '-1'], ['a', 'b'], ['--nope']]) {
      const err: string[] = [];
      const code = await runHostServe(argv, { out: () => {}, err: (l) => err.push(l) }, { startHost: () => Promise.reject(new Error('not reached')), untilStopped: () => new Promise(() => {}) });
      expect([argv.join(' '), code]).toEqual([argv.join(' '), 2]);
      expect(err[0]).toMatch(/^kit: /);
      expect(err).toContain(HOST_SERVE_USAGE);
    }
    expect(parseHostServeArgs(['d', '--budget', 'off', '--max-open', '10', '--idle', '5'], {})).toEqual({ dir: 'd', port: 4450, host: '127.0.0.1', budget: false, maxOpen: 10, idleMs: 5000 });
  });

  it('trusts the issuers of --trust and TRUSTED_ISSUERS: the host gets a pass verifier for them, and says so', async () => {
    expect(parseHostServeArgs(['--trust', 'https://platform.example'], { TRUSTED_ISSUERS: 'http://localhost:4460' })).toMatchObject({ trustedIssuers: ['https://platform.example', 'http://localhost:4460'] });
    expect(parseHostServeArgs([], {})).not.toHaveProperty('trustedIssuers');
    expect(() => parseHostServeArgs(['--trust', 'https://platform.example/tenant'], {})).toThrow('--trust: "https://platform.example/tenant" is not an issuer');
    expect(() => parseHostServeArgs([], { TRUSTED_ISSUERS: 'http://10.0.0.2' })).toThrow('TRUSTED_ISSUERS: "http://10.0.0.2" is not an issuer');
    const dir = mkdtempSync(join(tmpdir(), 'kit-host-cli-'));
    dirs.push(dir);
    const started: Record<string, unknown>[] = [];
    const out: string[] = [];
    const code = await runHostServe([dir, '--port', '0', '--trust', 'https://platform.example'], { out: (l) => out.push(l), err: (l) => out.push(`ERR ${l}`) }, {
      startHost: async (o) => {
        started.push(o as unknown as Record<string, unknown>);
        throw new Error('stop here');
      },
      untilStopped: () => new Promise(() => {}),
    }, { TRUSTED_ISSUERS: 'https://b.example' });
    expect(code).toBe(1);
    const passes = started[0]?.['passes'] as { trusted: string[]; verify: unknown } | undefined;
    expect(passes?.trusted).toEqual(['https://platform.example', 'https://b.example']);
    expect(typeof passes?.verify).toBe('function');
    const none: Record<string, unknown>[] = [];
    await runHostServe([dir, '--port', '0'], { out: () => {}, err: () => {} }, { startHost: async (o) => { none.push(o as unknown as Record<string, unknown>); throw new Error('stop here'); }, untilStopped: () => new Promise(() => {}) }, {});
    expect(none[0]).not.toHaveProperty('passes');
  });

  it('serves a host from a directory, prints its URL and admin token, keeps the token across restarts, and stops cleanly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kit-host-cli-'));
    dirs.push(dir);
    const twins = [...(await loadBuiltinTwins()).values()];
    const guestRuntime = await buildGuestRuntime();
    const run = async () => {
      const out: string[] = [];
      let stop: (s: string) => void = () => {};
      const stopped = new Promise<string>((resolve) => (stop = resolve));
      const done = runHostServe([dir, '--port', '0'], { out: (l) => out.push(l), err: (l) => out.push(`ERR ${l}`) }, { startHost: (o) => startMultiWorldHost({ ...o, twins, guestRuntime }), untilStopped: () => stopped });
      while (!out.some((l) => l.startsWith('Ctrl-C'))) {
        if (out.some((l) => l.startsWith('ERR'))) throw new Error(out.join('\n'));
        await new Promise((r) => setTimeout(r, 10));
      }
      const url = /URL\s+(\S+)/.exec(out.join('\n'))![1]!;
      const token = /admin token\s+(\S+)/.exec(out.join('\n'))![1]!;
      const ping = await (await fetch(`${url}/-/ping`)).json();
      const made = await fetch(`${url}/-/worlds`, { method: 'POST', headers: { 'x-kit-token': token }, body: JSON.stringify({ org: 'acme', world: 'shop', vendors: ['hello'] }) });
      stop('SIGINT');
      const code = await done;
      return { out, url, token, ping, made: made.status, code };
    };
    const first = await run();
    expect(first.code).toBe(0);
    expect(first.out.join('\n')).toContain('(minted now)');
    expect(first.out).toContain('  passes       none trusted (--trust <issuer>, docs/passes.md)');
    expect(first.ping).toEqual({ ok: true, worlds: [] });
    expect(first.made).toBe(201);
    expect(readFileSync(join(dir, '.kit-host', 'admin'), 'utf8').trim()).toBe(first.token);
    expect(readFileSync(join(dir, '.kit-host', 'url'), 'utf8').trim()).toBe(first.url);
    expect(first.out).toContain('kit: stopped');
    const second = await run();
    expect(second.token).toBe(first.token);
    expect(second.out.join('\n')).not.toContain('(minted now)');
    expect(second.ping).toEqual({ ok: true, worlds: ['acme/shop'] });
    expect(second.made).toBe(409);
  }, 60_000);
});
