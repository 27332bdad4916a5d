/**
 * PHP under `kit world attach`: the curl extension, configured by nothing but the environment
 * kit gives it (PHP_INI_SCAN_DIR's ini from sdk/attach/languages/php.ts among it), makes and
 * reads a Stripe customer at https://api.stripe.com on the twin; `file_get_contents` does when
 * the app names the proxy in its stream context. Skipped, saying why, where PHP or its curl
 * extension is not installed (`make languages` installs Debian's php-cli and php-curl).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAttach, cleanEnv, customerInWorld, REPO, runAttached, serveWorld } from '../harness.js';
import type { Built, ServedWorld } from '../harness.js';

const FIXTURES = join(REPO, 'test', 'attach', 'fixtures', 'php');

function phpMissing(): string | null {
  const probe = spawnSync('php', ['-r', 'exit(extension_loaded("curl") ? 0 : 3);'], { encoding: 'utf8' });
  if (probe.error !== undefined) return `php cannot be run (${(probe.error as NodeJS.ErrnoException).code ?? probe.error.message}); make languages installs Debian's php-cli and php-curl`;
  if (probe.status === 3) return "php has no curl extension; make languages installs Debian's php-curl";
  if (probe.status !== 0) return `php fails: ${probe.stderr.trim().slice(0, 200)}`;
  return null;
}
const missing = phpMissing();
if (missing !== null) console.warn(`test/attach/languages/php.test.ts skipped: ${missing}`);

let served: ServedWorld;
let built: Built;

const attach = (command: string[], env: Record<string, string> = {}) => runAttached(served, built, command, cleanEnv(env));

const customer = (id: string, key: string) => customerInWorld(served, id, key);

describe.skipIf(missing !== null)(`PHP under kit world attach${missing !== null ? ` [skipped: ${missing}]` : ''}`, () => {
  beforeAll(async () => {
    [served, built] = await Promise.all([serveWorld(['stripe']), buildAttach()]);
  });
  afterAll(async () => {
    await Promise.all([served?.close(), built?.close()]);
  });

  it('the curl extension makes and reads a customer at https://api.stripe.com on the twin', async () => {
    const r = await attach(['php', join(FIXTURES, 'curl.php'), 'sk_test_php_curl', 'php@example.com']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [id, email] = r.stdout.trim().split(' ');
    expect(id).toMatch(/^cus_/);
    expect(email).toBe('php@example.com');
    expect(await customer(id as string, 'sk_test_php_curl')).toEqual(expect.objectContaining({ status: 200, email: 'php@example.com' }));
  });

  it("without kit's ini the curl extension goes through the proxy but trusts only its built-in roots, so the world's certificate is refused", async () => {
    // The request reaches the world's proxy on loopback and stops at its TLS handshake.
    const r = await attach(['sh', '-c', 'unset PHP_INI_SCAN_DIR; exec php "$0" sk_test_php_no_ini none@example.com', join(FIXTURES, 'curl.php')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/SSL certificate problem/);
  });

  it('file_get_contents reaches the twin when the app names the proxy in its context; the CA comes from the environment', async () => {
    const r = await attach(['php', join(FIXTURES, 'stream.php'), 'sk_test_php_stream', 'stream@example.com']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [id] = r.stdout.trim().split(' ');
    expect(await customer(id as string, 'sk_test_php_stream')).toEqual(expect.objectContaining({ status: 200, email: 'stream@example.com' }));
  });

  it("keeps the folders PHP scans: its own (the curl extension stays loaded) and the user's, kit's ini last", async () => {
    const own = await mkdtemp(join(tmpdir(), 'kit-php-ini-'));
    try {
      await writeFile(join(own, 'user.ini'), 'memory_limit = 123M\ncurl.cainfo = /nowhere/user-bundle.pem\n');
      const probe = 'echo ini_get("memory_limit"), " ", extension_loaded("curl") ? "curl" : "no-curl", " ", ini_get("curl.cainfo") === getenv("SSL_CERT_FILE") ? "bundle" : ini_get("curl.cainfo"), "\\n";';
      // Unset: PHP's own folder (Debian's conf.d loads curl), then kit's.
      const plain = await attach(['php', '-r', probe]);
      expect(plain.stderr).toBe('');
      expect(plain.stdout).toMatch(/^\S+ curl bundle\n$/);
      // The user's folder list: theirs first, kit's last (its curl.cainfo wins); PHP's own folder
      // is scanned because the user's list starts with an empty element.
      const theirs = await attach(['php', '-r', probe], { PHP_INI_SCAN_DIR: `:${own}` });
      expect(theirs.stderr).toBe('');
      expect(theirs.stdout).toBe('123M curl bundle\n');
    } finally {
      await rm(own, { recursive: true, force: true });
    }
  });
});
