/**
 * Java trust stores read and written in Node, checked against the JDK's own keytool: what
 * Node reads of the machine's cacerts is what keytool lists, and what Node writes keytool
 * reads back, every certificate a trusted entry. Skipped, saying why, without a JDK.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryCa } from '../../../host/node/proxy/ca.js';
import { findJavaHome } from './java.js';
import { pemCertificates, readTrustStore, writePkcs12TrustStore } from './java-truststore.js';

const sha256 = (der: Buffer): string => createHash('sha256').update(der).digest('hex');

/** Each entry keytool lists: alias, kind and the SHA-256 of its (first) certificate. */
function keytoolList(keytool: string, store: string, password: string): { alias: string; kind: string; sha256: string }[] {
  const out = execFileSync(keytool, ['-list', '-rfc', '-keystore', store, '-storepass', password], { encoding: 'utf8' });
  return out
    .split(/^Alias name: /m)
    .slice(1)
    .map((section) => ({
      alias: (section.split('\n')[0] as string).trim(),
      kind: (/^Entry type: (.*)$/m.exec(section)?.[1] ?? '').trim(),
      sha256: sha256(pemCertificates(section)[0] as Buffer),
    }));
}

const home = await findJavaHome(process.env);
const keytool = home === null ? null : join(home, 'bin', 'keytool');
const missing = keytool === null ? 'no JDK (java on PATH or JAVA_HOME)' : spawnSync(keytool, ['-help'], { stdio: 'ignore' }).status !== 0 ? `no working keytool at ${keytool}` : null;
if (missing !== null) console.warn(`sdk/attach/languages/java-truststore.test.ts: keytool checks skipped: ${missing}`);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kit-truststore-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('trust stores in Node', () => {
  it('reads back what it writes, aliases made unique and lower-case as Java makes them', async () => {
    const a = pemCertificates((await createMemoryCa({ label: 'store test a' })).certPem)[0] as Buffer;
    const b = pemCertificates((await createMemoryCa({ label: 'store test b' })).certPem)[0] as Buffer;
    const back = readTrustStore(writePkcs12TrustStore([{ alias: 'Corp', der: a }, { alias: 'corp', der: b }]));
    expect(back?.map((c) => [c.alias, sha256(c.der)])).toEqual([
      ['corp', sha256(a)],
      ['corp-2', sha256(b)],
    ]);
  });

  it('answers null, not an exception, for bytes that are no trust store it can read', () => {
    const valid = writePkcs12TrustStore([{ alias: 'x', der: Buffer.from([0x30, 0x00]) }]);
    for (const bytes of [Buffer.alloc(0), Buffer.from('not a key store'), valid.subarray(0, valid.length - 5), Buffer.from([0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2, 0, 0, 0, 5])]) {
      expect(readTrustStore(bytes)).toBeNull();
    }
  });
});

describe.skipIf(missing !== null)(`trust stores against keytool${missing !== null ? ` (skipped: ${missing})` : ''}`, () => {
  it("reads the JDK's own cacerts as keytool lists it", async () => {
    const stdout = execFileSync(keytool as string, ['-list', '-cacerts', '-storepass', 'changeit', '-rfc'], { encoding: 'utf8' });
    const listed = pemCertificates(stdout).map(sha256).sort();
    const bytes = await readFile(join(home as string, 'lib', 'security', 'cacerts'));
    const read = readTrustStore(bytes);
    expect(read).not.toBeNull();
    expect(listed.length).toBeGreaterThan(50);
    expect(read?.map((c) => sha256(c.der)).sort()).toEqual(listed);
  });

  it('writes a store keytool reads whatever password it is given, every certificate a trusted entry under its alias', async () => {
    const certs = await Promise.all(['one', 'two', 'three'].map(async (n) => ({ alias: `kit-${n}`, der: pemCertificates((await createMemoryCa({ label: `store test ${n}` })).certPem)[0] as Buffer })));
    const path = join(dir, 'written.p12');
    await writeFile(path, writePkcs12TrustStore(certs));
    // keytool lists by alias.
    const expected = certs.map((c) => ({ alias: c.alias, kind: 'trustedCertEntry', sha256: sha256(c.der) })).sort((x, y) => x.alias.localeCompare(y.alias));
    expect(keytoolList(keytool as string, path, 'changeit')).toEqual(expected);
    expect(keytoolList(keytool as string, path, 'some-other-password')).toEqual(expected);
  });

  it('answers null for a PKCS#12 keytool encrypted with a password (the caller asks keytool then)', async () => {
    const pem = join(dir, 'corp.pem');
    await writeFile(pem, (await createMemoryCa({ label: 'store test encrypted' })).certPem);
    const store = join(dir, 'encrypted.p12');
    execFileSync(keytool as string, ['-importcert', '-noprompt', '-alias', 'corp', '-file', pem, '-keystore', store, '-storetype', 'PKCS12', '-storepass', 'secret-pw'], { stdio: 'ignore' });
    expect(readTrustStore(await readFile(store))).toBeNull();
  });
});
