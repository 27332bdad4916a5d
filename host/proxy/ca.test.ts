import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isKitError } from '../../runtime/errors.js';
import { caDir, createMemoryCa, loadOrCreateCa } from './ca.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kit-ca-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the world CA', () => {
  it('is generated once into .kit/ca/ with the key 0600, and the same CA is loaded on restart', async () => {
    const first = await loadOrCreateCa(dir, { label: 'kit world local/shop' });
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
    const ca = await createMemoryCa();
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
    const ca = await createMemoryCa({ now: () => now });
    const first = await ca.leafPem('api.stripe.com');
    now += 60 * 86_400_000;
    expect(await ca.leafPem('api.stripe.com')).toBe(first);
    now += 30 * 86_400_000;
    const renewed = await ca.leafPem('api.stripe.com');
    expect(renewed).not.toBe(first);
    expect(Date.parse(new X509Certificate(renewed).validTo)).toBeGreaterThan(now + 80 * 86_400_000);
  });

  it('refuses to issue for a name that is not a DNS name', async () => {
    const ca = await createMemoryCa();
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
        codes.push(isKitError(e) ? e.code : String(e));
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
    const ca = await loadOrCreateCa(dir);
    const certPath = join(caDir(dir), 'ca.pem');
    const good = await readFile(certPath, 'utf8');
    await writeFile(certPath, await ca.leafPem('api.stripe.com'));
    const leafAsCa = await loadOrCreateCa(dir).catch((e: unknown) => e);
    expect(isKitError(leafAsCa) && leafAsCa.code).toBe('ca_file_corrupt');
    expect(String((leafAsCa as Error).message)).toContain('CA:FALSE');
    await rm(certPath);
    execFileSync('mkfifo', [certPath]);
    const fifo = await loadOrCreateCa(dir).catch((e: unknown) => e);
    expect(isKitError(fifo) && fifo.code).toBe('ca_file_corrupt');
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
