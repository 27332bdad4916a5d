/**
 * Go under `kit world attach`: net/http's default client, configured by nothing but the usual
 * variables (Go reads HTTPS_PROXY, NO_PROXY and SSL_CERT_FILE itself; kit sets nothing more for
 * it), makes and reads a Stripe customer at https://api.stripe.com on the twin. `go run` of one
 * file with the standard library only: no module is fetched (GOPROXY=off), the build cache lives
 * in a temporary folder. Skipped, saying why, where Go is not installed (`make languages`
 * installs Debian's golang-go).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAttach, cleanEnv, REPO, run, serveWorld, TOKENS } from '../harness.js';
import type { Built, ServedWorld } from '../harness.js';

const APP = join(REPO, 'test', 'attach', 'fixtures', 'go', 'nethttp.go');

function goMissing(): string | null {
  const probe = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (probe.error !== undefined) return `go cannot be run (${(probe.error as NodeJS.ErrnoException).code ?? probe.error.message}); make languages installs Debian's golang-go`;
  if (probe.status !== 0) return `go version fails: ${probe.stderr.trim().slice(0, 200)}`;
  return null;
}
const missing = goMissing();
if (missing !== null) console.warn(`test/attach/languages/go.test.ts skipped: ${missing}`);

let served: ServedWorld;
let built: Built;
let work: string;

describe.skipIf(missing !== null)(`Go under kit world attach${missing !== null ? ` [skipped: ${missing}]` : ''}`, () => {
  beforeAll(async () => {
    [served, built, work] = await Promise.all([serveWorld(['stripe']), buildAttach(), mkdtemp(join(tmpdir(), 'kit-attach-go-'))]);
  });
  afterAll(async () => {
    await Promise.all([served?.close(), built?.close(), work === undefined ? undefined : rm(work, { recursive: true, force: true })]);
  });

  it('net/http makes and reads a customer at https://api.stripe.com on the twin', async () => {
    // The build's own folders, and no network for it: Go finds its standard library in GOROOT.
    const goEnv = { GOCACHE: join(work, 'cache'), GOPATH: join(work, 'gopath'), GOPROXY: 'off', GOTOOLCHAIN: 'local', GOFLAGS: '' };
    const r = await run(
      process.execPath,
      [built.kit, 'world', 'attach', served.server.worldUrl, '--token', TOKENS.token, '--', 'go', 'run', APP, 'sk_test_go_net_http', 'go@example.com'],
      cleanEnv(goEnv),
      // A first build of net/http into an empty cache (a Go without a prebuilt standard library) takes a while on two cores.
      170_000,
      work,
    );
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [id, email] = r.stdout.trim().split(' ');
    expect(id).toMatch(/^cus_/);
    expect(email).toBe('go@example.com');
    const back = await fetch(`${served.server.worldUrl}/stripe/v1/customers/${id as string}`, { headers: { 'x-kit-token': TOKENS.token, authorization: 'Bearer sk_test_go_net_http' } });
    expect(back.status).toBe(200);
    expect(((await back.json()) as { email: string }).email).toBe('go@example.com');
  }, 180_000);
});
