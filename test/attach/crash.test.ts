/**
 * What a user's load test keeps when the server dies: `kit world serve` on LMDB, an unmodified
 * app creating Stripe customers through `kit world attach` (16 in flight), the server killed
 * with SIGKILL in the middle, served again from the same folder: every customer the app was
 * answered for is there, whole, and the world takes new writes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, REPO, run } from './harness.js';

/** The built `kit` (`make test` builds first): serve runs the world in dist/'s worker. */
const KIT = join(REPO, 'dist', 'sdk', 'cli', 'kit.js');
let dir: string;
const servers: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kit-crash-'));
});
afterAll(async () => {
  for (const s of servers) if (s.exitCode === null && s.signalCode === null) s.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

/** `kit world serve <dir> --port 0 --twins stripe`, once it prints its world URL and token. */
async function serve(): Promise<{ child: ChildProcess; url: string; token: string }> {
  const child = spawn(process.execPath, [KIT, 'world', 'serve', dir, '--port', '0', '--twins', 'stripe'], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  servers.push(child);
  let out = '';
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      const url = /world URL\s+(\S+)/.exec(out)?.[1];
      const token = /\n\s+token\s+(\S+)/.exec(out)?.[1];
      if (url !== undefined && token !== undefined) resolve({ child, url, token });
    });
    child.on('close', (code) => reject(new Error(`kit world serve exited ${String(code)}: ${err}`)));
  });
}

/** An app: creates customers, 16 in flight, printing each id it is answered for, until a request fails. */
const CREATE_APP = `
const Stripe = require('stripe');
const stripe = new Stripe('sk_test_crash', { maxNetworkRetries: 0 });
let n = 0;
const worker = async () => {
  for (;;) {
    const i = n++;
    const c = await stripe.customers.create({ email: 'c' + i + '@example.com', metadata: { i: String(i) } });
    process.stdout.write(c.id + ' ' + i + '\\n');
  }
};
Promise.all(Array.from({ length: 16 }, worker)).catch(() => process.exit(3));
`;

/** An app: retrieves each id given on stdin's argument list, printing what it finds. */
const RETRIEVE_APP = `
const Stripe = require('stripe');
const stripe = new Stripe('sk_test_crash', { maxNetworkRetries: 0 });
(async () => {
  for (const pair of process.argv.slice(1)) {
    const [id, i] = pair.split(':');
    const c = await stripe.customers.retrieve(id).catch((e) => ({ id, missing: e.statusCode }));
    if (c.missing !== undefined || c.email !== 'c' + i + '@example.com' || c.metadata.i !== i) console.log('wrong', id, JSON.stringify(c).slice(0, 200));
  }
  const fresh = await stripe.customers.create({ email: 'after@example.com' });
  console.log('checked', process.argv.length - 1, 'then made', fresh.object);
})();
`;

describe('a server killed under load', () => {
  it('keeps every customer the app was answered for, and serves on from the same folder', async () => {
    const first = await serve();
    const app = spawn(process.execPath, [KIT, 'world', 'attach', first.url, '--token', first.token, '--', process.execPath, '-e', CREATE_APP], {
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const acked: string[] = [];
    let pending = '';
    const killedAt = await new Promise<number>((resolve) => {
      app.stdout?.on('data', (d: Buffer) => {
        pending += d.toString('utf8');
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) acked.push(line.replace(' ', ':'));
        // Mid-stream: 16 creates are in flight and a group commit is syncing.
        if (acked.length >= 400 && first.child.signalCode === null) {
          first.child.kill('SIGKILL');
          resolve(acked.length);
        }
      });
    });
    const appEnded = await new Promise<number | null>((resolve) => app.on('close', (code) => resolve(code)));
    // The app saw its requests fail once the server was gone.
    expect(appEnded).not.toBe(0);
    expect(killedAt).toBeGreaterThanOrEqual(400);

    // Served again from the same folder (the dead server's lock is taken over).
    const second = await serve();
    const r = await run(process.execPath, [KIT, 'world', 'attach', second.url, '--token', second.token, '--', process.execPath, '-e', RETRIEVE_APP, ...acked], cleanEnv());
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`checked ${acked.length} then made customer\n`);
    second.child.kill('SIGTERM');
  });
});
