import { execFileSync } from 'node:child_process';
import { X509Certificate, webcrypto } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, type SecureContext, type TlsOptions } from 'node:tls';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isCodedError } from '../../../runtime/errors.js';
import { caDir, createMemoryCa, loadOrCreateCa } from './ca.js';

/** The hosts the test CAs may vouch for. */
const HOSTS = ['api.stripe.com', 'api.github.com'];
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kit-ca-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the world CA', () => {
  it('is generated once into .kit/ca/ with the key 0600, and the same CA is loaded on restart', async () => {
    const first = await loadOrCreateCa(dir, { label: 'kit world local/shop', hosts: HOSTS });
    const keyPath = join(caDir(dir), 'ca-key.pem');
    expect((await stat(keyPath)).mode & 0o777).toBe(0o600);
    expect((await stat(caDir(dir))).mode & 0o777).toBe(0o700);
    expect(await readFile(join(caDir(dir), 'ca.pem'), 'utf8')).toBe(first.certPem);
    const cert = new X509Certificate(first.certPem);
    expect(cert.ca).toBe(true);
    expect(cert.subject).toContain('CN=kit world local/shop');
    expect(cert.fingerprint256.replaceAll(':', '').toLowerCase()).toBe(first.sha256);
    // The private key is never part of what is served.
    expect(first.certPem).not.toContain('PRIVATE KEY');

    const again = await loadOrCreateCa(dir);
    expect(again.sha256).toBe(first.sha256);
    // A leaf issued after the restart chains to the same CA.
    const leaf = new X509Certificate(await again.leafPem('api.stripe.com'));
    expect(leaf.verify(cert.publicKey)).toBe(true);
  });

  it('issues leaves for one host each, server-auth, chained to the CA, and caches them', async () => {
    const ca = await createMemoryCa({ hosts: HOSTS });
    const caCert = new X509Certificate(ca.certPem);
    const a = await ca.leafPem('API.Stripe.com');
    const leaf = new X509Certificate(a);
    expect(leaf.subjectAltName).toBe('DNS:api.stripe.com');
    expect(leaf.ca).toBe(false);
    expect(leaf.checkIssued(caCert)).toBe(true);
    expect(leaf.verify(caCert.publicKey)).toBe(true);
    expect(leaf.checkHost('api.stripe.com')).toBe('api.stripe.com');
    expect(leaf.checkHost('api.github.com')).toBeUndefined();
    expect(await ca.leafPem('api.stripe.com')).toBe(a);
    expect(await ca.leafPem('api.github.com')).not.toBe(a);
  });

  it('re-issues a leaf that is about to expire', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const ca = await createMemoryCa({ now: () => now, hosts: HOSTS });
    const first = await ca.leafPem('api.stripe.com');
    now += 60 * 86_400_000;
    expect(await ca.leafPem('api.stripe.com')).toBe(first);
    now += 30 * 86_400_000;
    const renewed = await ca.leafPem('api.stripe.com');
    expect(renewed).not.toBe(first);
    expect(Date.parse(new X509Certificate(renewed).validTo)).toBeGreaterThan(now + 80 * 86_400_000);
  });

  it('refuses to issue for a name that is not a DNS name', async () => {
    const ca = await createMemoryCa({ hosts: HOSTS });
    for (const bad of ['', '127.0.0.1x y', 'a..b', '*.stripe.com', 'x'.repeat(300), 'api.stripe.com\n']) {
      await expect(ca.leafPem(bad)).rejects.toThrow(TypeError);
    }
  });

  it('refuses a corrupt or mismatched CA with ca_file_corrupt and never replaces it', async () => {
    await loadOrCreateCa(dir);
    const certPath = join(caDir(dir), 'ca.pem');
    const keyPath = join(caDir(dir), 'ca-key.pem');
    const goodKey = await readFile(keyPath, 'utf8');

    // The key of another CA.
    const other = await mkdtemp(join(tmpdir(), 'kit-ca-'));
    try {
      await loadOrCreateCa(other);
      await writeFile(keyPath, await readFile(join(caDir(other), 'ca-key.pem'), 'utf8'));
    } finally {
      await rm(other, { recursive: true, force: true });
    }
    const codes: string[] = [];
    const attempt = async () => {
      try {
        await loadOrCreateCa(dir);
        codes.push('loaded');
      } catch (e) {
        codes.push(isCodedError(e) ? e.code : String(e));
      }
    };
    await attempt();
    await writeFile(keyPath, 'not a key');
    await attempt();
    await rm(keyPath);
    await attempt();
    await writeFile(certPath, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    await writeFile(keyPath, goodKey);
    await attempt();
    expect(codes).toEqual(['ca_file_corrupt', 'ca_file_corrupt', 'ca_file_corrupt', 'ca_file_corrupt']);
    // Nothing was minted over it.
    expect(await readFile(certPath, 'utf8')).toContain('AAAA');
  });

  it('refuses a certificate that is no CA, and a ca.pem that is not a regular file, without waiting on it', async () => {
    const ca = await loadOrCreateCa(dir, { hosts: HOSTS });
    const certPath = join(caDir(dir), 'ca.pem');
    const good = await readFile(certPath, 'utf8');
    await writeFile(certPath, await ca.leafPem('api.stripe.com'));
    const leafAsCa = await loadOrCreateCa(dir).catch((e: unknown) => e);
    expect(isCodedError(leafAsCa) && leafAsCa.code).toBe('ca_file_corrupt');
    expect(String((leafAsCa as Error).message)).toContain('CA:FALSE');
    await rm(certPath);
    execFileSync('mkfifo', [certPath]);
    const fifo = await loadOrCreateCa(dir).catch((e: unknown) => e);
    expect(isCodedError(fifo) && fifo.code).toBe('ca_file_corrupt');
    await rm(certPath);
    await writeFile(certPath, good);
    expect((await loadOrCreateCa(dir)).certPem).toBe(good);
  });

  it('tightens a loosened key mode on load', async () => {
    await loadOrCreateCa(dir);
    const keyPath = join(caDir(dir), 'ca-key.pem');
    await chmod(keyPath, 0o644);
    await loadOrCreateCa(dir);
    expect((await stat(keyPath)).mode & 0o777).toBe(0o600);
  });
});

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A DER key as PEM. */
function pemOf(label: string, der: ArrayBuffer): string {
  return `-----BEGIN ${label}-----\n${Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n')}\n-----END ${label}-----\n`;
}

/** A leaf for `host` signed with the CA's own key from `dir`, as a thief of that key would make it. */
async function forgeLeaf(caPem: string, caKeyPem: string, host: string): Promise<TlsOptions> {
  const x509 = await import('@peculiar/x509');
  const keyDer = Buffer.from(caKeyPem.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
  const caKey = await webcrypto.subtle.importKey('pkcs8', keyDer, ALG, false, ['sign']);
  const leafKeys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: '01',
    subject: `CN=${host}`,
    issuer: new x509.X509Certificate(caPem).subject,
    notBefore: new Date(Date.now() - 86_400_000),
    notAfter: new Date(Date.now() + 86_400_000),
    signingKey: caKey as CryptoKey,
    publicKey: leafKeys.publicKey,
    signingAlgorithm: ALG,
    extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: host }])],
  });
  return { cert: `${leaf.toString('pem')}\n${caPem}`, key: pemOf('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', leafKeys.privateKey)) };
}

/** What a Node TLS client that trusts only `caPem` makes of a server presenting `server` for `host`: 'ok' or its error. */
async function handshake(server: TlsOptions, caPem: string, host: string): Promise<string> {
  const tls = createServer(server, (socket) => socket.end());
  await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
  const port = (tls.address() as { port: number }).port;
  try {
    return await new Promise<string>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port, servername: host, ca: caPem }, () => {
        socket.destroy();
        resolve('ok');
      });
      socket.on('error', (e: NodeJS.ErrnoException) => resolve(e.message));
    });
  } finally {
    tls.close();
  }
}

describe('the world CA is name-constrained to the twins\' hosts', () => {
  it('vouches for those hosts (and below them) only, and a client refuses a leaf its key signs for any other', async () => {
    const ca = await loadOrCreateCa(dir, { hosts: ['API.Stripe.com', 'api.github.com', 'api.stripe.com'] });
    expect(ca.hosts).toEqual(['api.github.com', 'api.stripe.com']);
    expect(['api.stripe.com', 'API.STRIPE.COM', 'uploads.api.stripe.com', 'api.github.com'].map((h) => ca.covers(h))).toEqual([true, true, true, true]);
    expect(['stripe.com', 'evilapi.stripe.com', 'api.stripe.com.evil.test', 'example.com', 'localhost'].map((h) => ca.covers(h))).toEqual([false, false, false, false, false]);
    // The extension as openssl reads it: critical, the two names permitted, every IP address excluded.
    const text = execFileSync('openssl', ['x509', '-noout', '-text'], { input: ca.certPem }).toString();
    expect(text).toMatch(/X509v3 Name Constraints: critical\s+Permitted:\s+DNS:api\.github\.com\s+DNS:api\.stripe\.com\s+Excluded:\s+IP:0\.0\.0\.0\/0\.0\.0\.0\s+IP:[0:]+\/[0:]+\s/);

    // The world issues no leaf a client would refuse.
    await expect(ca.leafPem('example.com')).rejects.toThrow(/example\.com is outside the names this CA may vouch for \(api\.github\.com, api\.stripe\.com\)/);

    // Its own leaf passes a real TLS client; one forged with its key for another host does not.
    const caKeyPem = await readFile(join(caDir(dir), 'ca-key.pem'), 'utf8');
    const issued = { SNICallback: (name: string, cb: (e: Error | null, c?: SecureContext) => void) => void ca.contextFor(name).then((c) => cb(null, c), cb) };
    expect(await handshake(issued, ca.certPem, 'api.stripe.com')).toBe('ok');
    expect(await handshake(await forgeLeaf(ca.certPem, caKeyPem, 'api.stripe.com'), ca.certPem, 'api.stripe.com')).toBe('ok');
    expect(await handshake(await forgeLeaf(ca.certPem, caKeyPem, 'www.example.com'), ca.certPem, 'www.example.com')).toBe('permitted subtree violation');
    expect(await handshake(await forgeLeaf(ca.certPem, caKeyPem, 'api.stripe.com.evil.test'), ca.certPem, 'api.stripe.com.evil.test')).toBe('permitted subtree violation');
    // A reload keeps the names it was minted with, whatever hosts are asked for now.
    expect((await loadOrCreateCa(dir, { hosts: ['api.slack.com'] })).hosts).toEqual(['api.github.com', 'api.stripe.com']);
  });

  it('with no hosts given vouches for no name at all', async () => {
    const ca = await createMemoryCa();
    expect(ca.hosts).toEqual([]);
    expect(ca.covers('api.stripe.com')).toBe(false);
    await expect(ca.leafPem('api.stripe.com')).rejects.toThrow(/outside the names this CA may vouch for \(none\)/);
    const text = execFileSync('openssl', ['x509', '-noout', '-text'], { input: ca.certPem }).toString();
    expect(text).toMatch(/Excluded:\s+DNS:\s+IP:0\.0\.0\.0/);
  });

  it('loads a CA minted without constraints (by an older kit) as it is, vouching for any host', async () => {
    const x509 = await import('@peculiar/x509');
    const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
    const old = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: '02',
      name: 'CN=kit world local/old',
      notBefore: new Date(Date.now() - 86_400_000),
      notAfter: new Date(Date.now() + 365 * 86_400_000),
      keys,
      signingAlgorithm: ALG,
      extensions: [new x509.BasicConstraintsExtension(true, 0, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
    });
    await mkdir(caDir(dir), { recursive: true });
    await writeFile(join(caDir(dir), 'ca-key.pem'), pemOf('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)), { mode: 0o600 });
    await writeFile(join(caDir(dir), 'ca.pem'), old.toString('pem'));
    const ca = await loadOrCreateCa(dir, { hosts: HOSTS });
    expect(ca.hosts).toBeNull();
    expect(ca.covers('api.slack.com')).toBe(true);
    expect(new X509Certificate(await ca.leafPem('api.slack.com')).checkHost('api.slack.com')).toBe('api.slack.com');
  });
});
