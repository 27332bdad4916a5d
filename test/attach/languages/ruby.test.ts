/**
 * Ruby under `kit world attach`: Net::HTTP, configured by nothing but the environment kit
 * gives it (RUBYOPT's file from sdk/attach/languages/ruby.ts among it), makes and reads a
 * Stripe customer at https://api.stripe.com on the twin. Skipped, saying why, where Ruby is
 * not installed (`make languages` installs Debian's).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAttach, cleanEnv, customerInWorld, REPO, runAttached, serveWorld } from '../harness.js';
import type { Built, ServedWorld } from '../harness.js';

const FIXTURES = join(REPO, 'test', 'attach', 'fixtures', 'ruby');

function rubyMissing(): string | null {
  const probe = spawnSync('ruby', ['-e', 'require "net/http"; require "openssl"'], { encoding: 'utf8' });
  if (probe.error !== undefined) return `ruby cannot be run (${(probe.error as NodeJS.ErrnoException).code ?? probe.error.message}); make languages installs Debian's ruby`;
  if (probe.status !== 0) return `ruby cannot load net/http and openssl: ${probe.stderr.trim().slice(0, 200)}`;
  return null;
}
const missing = rubyMissing();
if (missing !== null) console.warn(`test/attach/languages/ruby.test.ts skipped: ${missing}`);

let served: ServedWorld;
let built: Built;

const attach = (command: string[], env: Record<string, string> = {}) => runAttached(served, built, command, cleanEnv(env));

const customer = (id: string, key: string) => customerInWorld(served, id, key);

describe.skipIf(missing !== null)(`Ruby under kit world attach${missing !== null ? ` [skipped: ${missing}]` : ''}`, () => {
  beforeAll(async () => {
    [served, built] = await Promise.all([serveWorld(['stripe']), buildAttach()]);
  });
  afterAll(async () => {
    await Promise.all([served?.close(), built?.close()]);
  });

  it('Net::HTTP makes and reads a customer at https://api.stripe.com on the twin', async () => {
    const r = await attach(['ruby', join(FIXTURES, 'net_http.rb'), 'sk_test_ruby_net_http', 'ruby@example.com']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [id, email] = r.stdout.trim().split(' ');
    expect(id).toMatch(/^cus_/);
    expect(email).toBe('ruby@example.com');
    expect(await customer(id as string, 'sk_test_ruby_net_http')).toEqual(expect.objectContaining({ status: 200, email: 'ruby@example.com' }));
  });

  it("an SDK that names no proxy and trusts a CA file of its own (stripe-ruby's way) reaches the twin too", async () => {
    const r = await attach(['ruby', join(FIXTURES, 'sdk_like.rb'), 'sk_test_ruby_sdk_like', 'sdk@example.com']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [id] = r.stdout.trim().split(' ');
    expect(await customer(id as string, 'sk_test_ruby_sdk_like')).toEqual(expect.objectContaining({ status: 200, email: 'sdk@example.com' }));
  });

  it("Net::HTTP reads only http_proxy: without kit's RUBYOPT file a TLS connection ignores HTTPS_PROXY; with it, only twinned hosts of SDKs that name no proxy are sent to the world", async () => {
    // proxy? is decided before a socket opens: no request leaves the machine here.
    const script = [
      'require "net/http"',
      'def tls(*args); Net::HTTP.new(*args).tap { |h| h.use_ssl = true }; end',
      'puts tls("api.stripe.com", 443).proxy?',
      'puts tls("api.stripe.com", 443, nil).proxy?',
      'puts tls("example.com", 443, nil).proxy?',
      'puts Net::HTTP.new(URI(ENV["STRIPE_API_BASE"]).host, URI(ENV["STRIPE_API_BASE"]).port).proxy?',
    ].join('\n');
    const withHook = await attach(['ruby', '-e', script]);
    expect(withHook.stderr).toBe('');
    // The vendor's host through the proxy, also for an SDK naming none; any other host it names
    // none for, and plain HTTP to the world itself, stay direct.
    expect(withHook.stdout).toBe('true\ntrue\nfalse\nfalse\n');
    const without = await attach(['sh', '-c', 'RUBYOPT= exec ruby -e "$0"', script]);
    expect(without.stderr).toBe('');
    expect(without.stdout).toBe('false\nfalse\nfalse\nfalse\n');
  });

  it("keeps the user's RUBYOPT, kit's file after it", async () => {
    const r = await attach(['ruby', '-e', 'puts ENV["RUBYOPT"]; puts $VERBOSE.inspect'], { RUBYOPT: '-W0' });
    expect(r.stderr).toBe('');
    const [rubyopt, verbose] = r.stdout.trim().split('\n');
    expect(rubyopt).toMatch(/^-W0 -r\/.+\/ruby\/kit_attach\.rb$/);
    // -W0 still in force.
    expect(verbose).toBe('nil');
  });

  it('says in one line that Ruby is not prepared when the temporary folder has a space (RUBYOPT splits on spaces), and runs the command', async () => {
    const spaced = await mkdtemp(join(tmpdir(), 'kit attach ruby '));
    try {
      const r = await attach(['ruby', '-e', 'puts ENV.fetch("RUBYOPT", "unset")'], { TMPDIR: spaced });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('unset\n');
      expect(r.stderr).toMatch(/^kit: Ruby is not prepared for the world: the temporary folder .* has white space in its path, which RUBYOPT cannot carry \(set TMPDIR to another folder\)\n$/);
    } finally {
      await rm(spaced, { recursive: true, force: true });
    }
  });
});
