/**
 * `kit pass …` as a person trying passes runs it: an issuer serving its keys, a pass signed
 * for a world on this machine and checked by the host's verifier through that issuer, a
 * rotation, and the failures said in one line.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPassVerifier } from '../../host/core/access/passes.js';
import { echoWorld } from '../../host/echo-world.js';
import { main, PASS_USAGE } from './main.js';
import type { CliDeps } from './main.js';
import { passWorldOf } from './pass-commands.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kit-pass-cli-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Run {
  code: Promise<number>;
  out: string[];
  err: string[];
  stop(): void;
}

function kit(argv: string[], env: Record<string, string> = {}): Run {
  const out: string[] = [];
  const err: string[] = [];
  let stop: (s: string) => void = () => {};
  const stopped = new Promise<string>((resolve) => (stop = resolve));
  const deps: CliDeps = {
    version: 'test',
    loadTwins: async () => new Map(),
    openWorld: async (o) => echoWorld(o.world, 'pass-cli'),
    untilStopped: () => stopped,
    client: { env: {}, cwd: dir },
    env,
  };
  return { code: main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, deps), out, err, stop: () => stop('SIGINT') };
}

async function finished(argv: string[]) {
  const r = kit(argv);
  return { code: await r.code, out: r.out, err: r.err };
}

describe('passWorldOf', () => {
  it('reads <org>/<world>, a world URL on this machine, or the world\'s origin', () => {
    expect(passWorldOf('acme/shop')).toEqual({ world: 'acme/shop', origin: null });
    expect(passWorldOf('http://127.0.0.1:4440/local/shop')).toEqual({ world: 'local/shop', origin: 'http://shop--local.localhost:4440' });
    expect(passWorldOf('http://localhost:4450/-/acme/shop')).toEqual({ world: 'acme/shop', origin: 'http://shop--acme.localhost:4450' });
    expect(passWorldOf('http://shop--acme.localhost:4450/')).toEqual({ world: 'acme/shop', origin: 'http://shop--acme.localhost:4450' });
    expect(passWorldOf('https://shop--acme.worlds.example.com')).toEqual({ world: 'acme/shop', origin: 'https://shop--acme.worlds.example.com' });
    // A hosted world URL does not say its origin (the host's suffix is its own).
    expect(passWorldOf('https://kit.example.com/acme/shop')).toEqual({ world: 'acme/shop', origin: null });
    for (const bad of ['shop', 'Acme/Shop', 'http://127.0.0.1:4440/', 'http://localhost/x', 'https://shop.example.com/']) expect(() => passWorldOf(bad), bad).toThrow();
  });
});

describe('kit pass', () => {
  it('serves an issuer, signs a pass a host trusting it takes, rotates, and stops', async () => {
    const issuer = kit(['pass', 'issuer', '--port', '0', '--dir', 'keys']);
    while (!issuer.out.includes('Ctrl-C stops it.')) {
      if (issuer.err.length > 0) throw new Error(issuer.err.join('\n'));
      await new Promise((r) => setTimeout(r, 5));
    }
    const url = /^  issuer\s+(\S+)/m.exec(issuer.out.join('\n'))![1]!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(issuer.out).toContain(`  kit world serve --trust ${url}`);
    expect(issuer.out.join('\n')).toContain(`${join(dir, 'keys', 'keys.json')}  (private: whoever reads it signs passes)`);

    const signed = await finished(['pass', 'sign', '--dir', 'keys', '--world', 'http://127.0.0.1:4440/local/shop', '--scope', 'write', '--subject', 'ada', '--name', 'Ada Lovelace']);
    expect([signed.code, signed.err]).toEqual([0, []]);
    expect(signed.out).toHaveLength(1);
    const [origin, pass] = signed.out[0]!.split('/#pass=') as [string, string];
    expect(origin).toBe('http://shop--local.localhost:4440');
    const verifier = createPassVerifier({ trusted: [url] });
    const check = await verifier.verify(pass, { world: 'local/shop', origin, now: Date.now() });
    expect(check).toMatchObject({ ok: true, claims: { issuer: url, subject: 'ada', name: 'Ada Lovelace', scope: 'write', world: 'local/shop', origin } });
    expect(decodeJwt(pass).exp! - decodeJwt(pass).iat!).toBe(300);

    const rotated = await finished(['pass', 'rotate', '--dir', 'keys', '--json']);
    expect(rotated.code).toBe(0);
    const { kid, published } = JSON.parse(rotated.out[0]!) as { kid: string; published: string[] };
    expect(published).toHaveLength(2);
    expect(published[0]).toBe(kid);
    expect(published[1]).toBe(decodeProtectedHeader(pass).kid);
    const after = await finished(['pass', 'sign', '--dir', 'keys', '--world', 'local/shop', '--origin', origin, '--scope', 'read', '--subject', 'ada', '--ttl', '60', '--json']);
    const answer = JSON.parse(after.out[0]!) as { url: string; pass: string; issuer: string; scope: string };
    expect(answer).toMatchObject({ issuer: url, scope: 'read', url: `${origin}/#pass=${answer.pass}` });
    expect(decodeProtectedHeader(answer.pass).kid).toBe(kid);
    // A host that never fetched the keys finds the new one at the running issuer.
    expect(await createPassVerifier({ trusted: [url] }).verify(answer.pass, { world: 'local/shop', origin, now: Date.now() })).toMatchObject({ ok: true, claims: { scope: 'read' } });

    issuer.stop();
    expect(await issuer.code).toBe(0);
    expect(issuer.out.at(-1)).toBe('kit: stopped');
    await expect(fetch(`${url}/.well-known/jwks.json`)).rejects.toThrow();
  });

  it('says what is missing or wrong: no keys or issuer yet (exit 1), a flag missing or bad (exit 2), a corrupt key file (exit 1), a port in use (exit 1)', async () => {
    const sign = ['pass', 'sign', '--world', 'http://127.0.0.1:4440/local/shop', '--scope', 'write', '--subject', 'ada'];
    const noKeys = await finished(sign);
    expect([noKeys.code, noKeys.err]).toEqual([1, [`kit: no pass keys in ${join(dir, '.kit-pass')}: start \`kit pass issuer --dir .kit-pass\` first (it makes them) (no_keys)`]]);
    expect(await finished(['pass', 'rotate'])).toMatchObject({ code: 1, err: [expect.stringContaining('(no_keys)')] });

    for (const [argv, said] of [
      [['pass', 'sign', '--world', 'local/shop', '--scope', 'write', '--subject', 'ada'], "kit: name the world's origin with --origin"],
      [['pass', 'sign', '--world', 'local/shop', '--origin', 'http://shop--local.localhost:4440', '--subject', 'ada'], 'kit: kit pass sign needs --scope'],
      [[...sign.slice(0, -4), '--scope', 'admin', '--subject', 'ada'], 'kit: --scope must be read or write, got "admin"'],
      [[...sign, '--ttl', 'soon'], 'kit: --ttl must be a whole number of at least 1, got "soon"'],
      [['pass', 'sign', '--world', 'Shop', '--scope', 'read', '--subject', 'ada'], 'kit: name the world as <org>/<world>'],
      [['pass', 'issuer', '--port', 'x'], 'kit: --port must be a number from 0 to 65535, got "x"'],
      [['pass', 'bogus'], 'kit: unknown command pass bogus'],
    ] as const) {
      const r = await finished([...argv]);
      expect([argv.join(' '), r.code, r.err[0]?.slice(0, said.length)]).toEqual([argv.join(' '), 2, said]);
    }
    expect((await finished(['pass'])).err.slice(2).join('\n')).toBe(PASS_USAGE);

    // Keys, but no issuer has run: the pass would name no iss.
    const issuerFirst = kit(['pass', 'issuer', '--port', '0', '--dir', 'k2']);
    while (!issuerFirst.out.includes('Ctrl-C stops it.')) await new Promise((r) => setTimeout(r, 5));
    issuerFirst.stop();
    await issuerFirst.code;
    await rm(join(dir, 'k2', 'issuer'));
    expect(await finished([...sign, '--dir', 'k2'])).toMatchObject({ code: 1, err: [expect.stringContaining('(no_issuer)')] });
    const named = await finished([...sign, '--dir', 'k2', '--issuer', 'http://localhost:4460', '--ttl', '601']);
    expect([named.code, named.err[0]]).toEqual([2, 'kit: ttlSeconds must be a whole number from 1 to 600, got 601']);
    expect((await finished([...sign, '--dir', 'k2', '--issuer', 'http://localhost:4460'])).code).toBe(0);

    await writeFile(join(dir, 'k2', 'keys.json'), '{"keys": "none"}');
    expect(await finished([...sign, '--dir', 'k2', '--issuer', 'http://localhost:4460'])).toMatchObject({ code: 1, err: [expect.stringMatching(/keys\.json does not hold pass keys .*\(pass_keys_corrupt\)$/)] });

    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const busy = await finished(['pass', 'issuer', '--port', String(port)]);
      expect([busy.code, busy.err]).toEqual([1, [`kit: 127.0.0.1:${port} is in use (an issuer already running?); pass --port N for another (port_in_use)`]]);
    } finally {
      taken.close();
    }
  });
});

/** Resolves once a long-running command has printed its last line before waiting. */
async function ready(run: Run): Promise<void> {
  while (!run.out.some((l) => l.startsWith('Ctrl-C'))) {
    if (run.err.length > 0) throw new Error(run.err.join('\n'));
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** POST {world_api}/session with a pass, as the world's page at its own origin sends it. */
function openSession(port: number, origin: string, api: string, pass: string): Promise<{ status: number; body: { error?: { code: string }; [k: string]: unknown }; cookie: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: `${new URL(api).pathname}/session`, headers: { host: new URL(origin).host, origin, 'sec-fetch-site': 'same-origin', 'x-kit-pass': pass } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as { error?: { code: string } }, cookie: res.headers['set-cookie']?.[0] }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('kit pass with kit world serve --trust', () => {
  it('a pass from kit pass sign opens a session at the world served with --trust, once; an untrusting world refuses it', async () => {
    const issuer = kit(['pass', 'issuer', '--port', '0']);
    await ready(issuer);
    const issuerUrl = /^  issuer\s+(\S+)/m.exec(issuer.out.join('\n'))![1]!;
    await mkdir(join(dir, 'shop'));
    const served = kit(['world', 'serve', join(dir, 'shop'), '--port', '0', '--trust', issuerUrl]);
    await ready(served);
    const text = served.out.join('\n');
    const worldUrl = /world URL\s+(\S+)/.exec(text)![1]!;
    const api = /world API\s+(\S+)/.exec(text)![1]!;
    const port = Number(new URL(worldUrl).port);
    expect(text).toContain(`passes       signed by ${issuerUrl}`);
    try {
      const signed = await finished(['pass', 'sign', '--world', worldUrl, '--scope', 'write', '--subject', 'ada', '--name', 'Ada']);
      const [origin, pass] = signed.out[0]!.split('/#pass=') as [string, string];
      expect(text).toContain(`world page   ${origin}/`);
      const first = await openSession(port, origin, api, pass);
      expect([first.status, first.body]).toEqual([200, expect.objectContaining({ world: 'local/shop', scope: 'write', who: 'ada', name: 'Ada', issuer: issuerUrl, origin })]);
      expect(first.cookie).toMatch(/^kit_session=.*HttpOnly/i);
      const replay = await openSession(port, origin, api, pass);
      expect([replay.status, replay.body.error?.code]).toEqual([401, 'pass_spent']);
      const elsewhere = await finished(['pass', 'sign', '--world', 'local/other', '--origin', origin, '--scope', 'read', '--subject', 'ada']);
      const wrong = await openSession(port, origin, api, elsewhere.out[0]!.split('#pass=')[1]!);
      expect([wrong.status, wrong.body.error?.code]).toEqual([401, 'pass_wrong_world']);
    } finally {
      served.stop();
      await served.code;
    }
    // The same world served without --trust takes no pass.
    const plain = kit(['world', 'serve', join(dir, 'shop'), '--port', '0']);
    await ready(plain);
    try {
      const text2 = plain.out.join('\n');
      const worldUrl2 = /world URL\s+(\S+)/.exec(text2)![1]!;
      const signed = await finished(['pass', 'sign', '--world', worldUrl2, '--scope', 'read', '--subject', 'ada']);
      const [origin, pass] = signed.out[0]!.split('/#pass=') as [string, string];
      const refused = await openSession(Number(new URL(worldUrl2).port), origin, /world API\s+(\S+)/.exec(text2)![1]!, pass);
      expect([refused.status, refused.body.error?.code]).toEqual([401, 'pass_untrusted_issuer']);
    } finally {
      plain.stop();
      await plain.code;
      issuer.stop();
      await issuer.code;
    }
  });
});
