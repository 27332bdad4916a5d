/**
 * Java apps under `kit world attach`, unchanged: small programs (test/attach/fixtures/java/),
 * compiled with the machine's javac, make and read a Stripe customer at https://api.stripe.com
 * with `HttpURLConnection` (what stripe-java and most vendors' SDKs send with) and with
 * `java.net.http.HttpClient` (its default ProxySelector), and a probe shows what the JVM itself
 * decided: the proxy per URI, the issuers its default trust manager accepts. Skipped, saying
 * why, where java or javac is missing.
 */
import { spawnSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryCa } from '../../../host/node/proxy/ca.js';
import { buildAttach, cleanEnv, customerInWorld, REPO, run, runAttached, serveWorld, TOKENS } from '../harness.js';
import type { Built, Run, ServedWorld } from '../harness.js';

const FIXTURES = join(REPO, 'test', 'attach', 'fixtures', 'java');

function missingJava(): string | null {
  for (const tool of ['java', 'javac', 'keytool']) {
    const probe = spawnSync(tool, tool === 'keytool' ? ['-help'] : ['-version'], { stdio: 'ignore' });
    if (probe.error !== undefined || probe.status !== 0) return `no ${tool} on PATH (${probe.error?.message ?? `exit ${probe.status}`})`;
  }
  return null;
}

const missing = missingJava();
if (missing !== null) console.warn(`test/attach/languages/java.test.ts skipped: ${missing}; install a JDK (Debian: default-jdk-headless) to run it`);

let served: ServedWorld;
let built: Built;
let classes: string;
let manifest: { ca: { pem: string; sha256: string }; proxy: { url: string } };

beforeAll(async () => {
  if (missing !== null) return;
  classes = await mkdtemp(join(tmpdir(), 'kit-java-classes-'));
  const sources = (await readdir(FIXTURES)).filter((f) => f.endsWith('.java')).map((f) => join(FIXTURES, f));
  const compiled = spawnSync('javac', ['-d', classes, ...sources], { encoding: 'utf8' });
  if (compiled.status !== 0) throw new Error(`javac failed: ${compiled.stderr}`);
  [served, built] = await Promise.all([serveWorld(['stripe']), buildAttach()]);
  manifest = (await (await fetch(`${served.server.worldUrl}/.well-known/kit-world`, { headers: { 'x-kit-token': TOKENS.token } })).json()) as typeof manifest;
}, 120_000);
afterAll(async () => {
  await Promise.all([served?.close(), built?.close(), classes ? rm(classes, { recursive: true, force: true }) : undefined]);
});

const attach = (command: string[], env: Record<string, string> = {}): Promise<Run> => runAttached(served, built, command, cleanEnv(env), 90_000);

/** The customer as the twin has it, asked straight at the world (not through anything Java used). */
async function customerInTwin(key: string, id: string): Promise<{ id?: string; email?: string }> {
  const found = await customerInWorld(served, id, key);
  expect(found.status).toBe(200);
  return found;
}

/** The probe's lines, parsed. */
function probe(stdout: string): { proxy: Map<string, string>; properties: Map<string, string>; issuers: string[] } {
  const proxy = new Map<string, string>();
  const properties = new Map<string, string>();
  const issuers: string[] = [];
  for (const line of stdout.split('\n')) {
    const [kind, a, ...rest] = line.split(' ');
    if (kind === 'proxy') proxy.set(a as string, rest.join(' '));
    if (kind === 'property') properties.set(a as string, rest.join(' '));
    if (kind === 'issuer') issuers.push(a as string);
  }
  return { proxy, properties, issuers };
}

/** The JVM announces JAVA_TOOL_OPTIONS on stderr, always; nothing else may be there. */
function onlyTheJvmNotice(stderr: string): void {
  expect(stderr).toMatch(/^Picked up JAVA_TOOL_OPTIONS: [^\n]*-Dhttps\.proxyHost=127\.0\.0\.1 [^\n]*\n$/);
}

describe.skipIf(missing !== null)(`Java under kit world attach${missing !== null ? ` (skipped: ${missing})` : ''}`, () => {
  it('HttpURLConnection makes and reads a customer at https://api.stripe.com, answered by the twin', async () => {
    const r = await attach(['java', '-cp', classes, 'UrlConnectionStripe', 'sk_test_java_url', 'ada@example.com']);
    onlyTheJvmNotice(r.stderr);
    expect(r.code).toBe(0);
    const [id, email] = r.stdout.trim().split(' ');
    expect(id).toMatch(/^cus_/);
    expect(email).toBe('ada@example.com');
    expect(await customerInTwin('sk_test_java_url', id as string)).toMatchObject({ id, email: 'ada@example.com' });
  }, 90_000);

  it("HttpClient (newHttpClient, the default ProxySelector) makes and reads a customer the same way", async () => {
    const r = await attach(['java', '-cp', classes, 'HttpClientStripe', 'sk_test_java_client', 'grace@example.com']);
    onlyTheJvmNotice(r.stderr);
    expect(r.code).toBe(0);
    const [id, email] = r.stdout.trim().split(' ');
    expect(id).toMatch(/^cus_/);
    expect(email).toBe('grace@example.com');
    expect(await customerInTwin('sk_test_java_client', id as string)).toMatchObject({ id, email: 'grace@example.com' });
  }, 90_000);

  it("the JVM trusts the JDK's own roots plus the world's CA, routes https through the relay and NO_PROXY around it, keeps the user's options", async () => {
    const uris = ['https://api.stripe.com/', 'https://example.org/', 'http://api.stripe.com/', 'https://db.internal/', 'https://a.corp.example/', 'https://corp.example/', 'https://localhost:8443/', 'https://[::1]:8443/', 'https://[fd00::1]/'];
    const r = await attach(['java', '-cp', classes, 'AttachProbe', ...uris], { JAVA_TOOL_OPTIONS: '-Dkit.probe.marker=kept', NO_PROXY: 'db.internal,.corp.example,[fd00::1]:5432,10.0.0.0/8' });
    onlyTheJvmNotice(r.stderr);
    expect(r.code).toBe(0);
    const seen = probe(r.stdout);
    const relayPort = seen.properties.get('https.proxyPort');
    for (const uri of ['https://api.stripe.com/', 'https://example.org/']) expect(seen.proxy.get(uri)).toBe(`HTTP 127.0.0.1:${relayPort}`);
    // The world's proxy tunnels only: http: goes direct, as do the hosts left out of the proxy.
    for (const uri of ['http://api.stripe.com/', 'https://db.internal/', 'https://a.corp.example/', 'https://corp.example/', 'https://localhost:8443/', 'https://[::1]:8443/', 'https://[fd00::1]/']) {
      expect([uri, seen.proxy.get(uri)]).toEqual([uri, 'DIRECT']);
    }
    expect(seen.properties.get('kit.probe.marker')).toBe('kept');

    const plain = await run('java', ['-cp', classes, 'AttachProbe'], cleanEnv());
    expect(plain.code).toBe(0);
    const jdkRoots = probe(plain.stdout).issuers;
    expect(jdkRoots.length).toBeGreaterThan(50);
    expect(jdkRoots).not.toContain(manifest.ca.sha256);
    expect([...seen.issuers].sort()).toEqual([...jdkRoots, manifest.ca.sha256].sort());

    // The relay goes with the command.
    const refused = await new Promise<string>((resolve) => {
      const socket = connect(Number(relayPort), '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    });
    expect(refused).toBe('ECONNREFUSED');
  }, 90_000);

  it('a temporary folder with a space in its path is quoted in JAVA_TOOL_OPTIONS, and the app still reaches the twin', async () => {
    const spaced = await mkdtemp(join(tmpdir(), 'kit java tmp '));
    try {
      const r = await attach(['java', '-cp', classes, 'UrlConnectionStripe', 'sk_test_java_space', 'space@example.com'], { TMPDIR: spaced });
      expect(r.stderr).toContain(`Picked up JAVA_TOOL_OPTIONS: "-Djavax.net.ssl.trustStore=${spaced}/`);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^cus_\w+ space@example\.com\n$/);
    } finally {
      await rm(spaced, { recursive: true, force: true });
    }
  }, 90_000);

  it("a temporary folder whose path JAVA_TOOL_OPTIONS cannot carry (both kinds of quote) leaves Java unprepared, said in one line, and the command runs", async () => {
    const quoted = await mkdtemp(join(tmpdir(), `kit-java-'"-`));
    try {
      const r = await attach(['sh', '-c', 'echo "JAVA_TOOL_OPTIONS=${JAVA_TOOL_OPTIONS-unset}"'], { TMPDIR: quoted });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('JAVA_TOOL_OPTIONS=unset\n');
      // Other languages may say their own line about the same folder.
      expect(r.stderr.split('\n').filter((l) => /java/i.test(l.split(quoted).join('')))).toEqual([
        expect.stringMatching(/^kit: Java is not prepared for the world: the temporary folder .* has both kinds of quote in its path, which JAVA_TOOL_OPTIONS cannot carry \(set TMPDIR to another folder\)$/),
      ]);
    } finally {
      await rm(quoted, { recursive: true, force: true });
    }
  }, 90_000);

  it('a trust store the user already named (a password-protected PKCS#12) is the one the world CA joins', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kit-java-userstore-'));
    try {
      const corp = await createMemoryCa({ label: 'corp root for the kit java test' });
      const pemFile = join(dir, 'corp.pem');
      await writeFile(pemFile, corp.certPem);
      const store = join(dir, 'user-trust.p12');
      const made = spawnSync('keytool', ['-importcert', '-noprompt', '-alias', 'corp', '-file', pemFile, '-keystore', store, '-storetype', 'PKCS12', '-storepass', 'user-secret'], { encoding: 'utf8' });
      expect(made.status, made.stderr).toBe(0);
      const r = await attach(['java', '-cp', classes, 'AttachProbe'], { JAVA_TOOL_OPTIONS: `-Djavax.net.ssl.trustStore=${store} -Djavax.net.ssl.trustStorePassword=user-secret` });
      onlyTheJvmNotice(r.stderr);
      expect(r.code).toBe(0);
      const corpSha = createHash('sha256').update(new X509Certificate(corp.certPem).raw).digest('hex');
      expect(probe(r.stdout).issuers.sort()).toEqual([corpSha, manifest.ca.sha256].sort());
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
