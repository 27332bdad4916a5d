/**
 * The world's own certificate authority. The CONNECT proxy terminates TLS for twinned hosts
 * (`api.stripe.com`, …) with leaf certificates this CA issues on the fly; clients trust it
 * through the attach manifest's `ca` (or `kit world attach`'s CA variables).
 *
 * Generated once per world directory and kept in `<dir>/.kit/ca/`: `ca.pem` (the
 * certificate) and `ca-key.pem` (PKCS#8, mode 0600, never served). ECDSA P-256: small and
 * fast to sign with, and every TLS client of the last decade accepts it.
 *
 * The CA is name-constrained (RFC 5280 §4.2.1.10, critical) to the hosts it is minted for:
 * the built-in twins' hosts. An app told to trust it (`kit world attach` adds it to the
 * app's roots) then trusts it for those hosts only: whoever holds the key (anyone who can
 * read the world's folder, or the operator of a world served elsewhere) cannot vouch for the
 * app's other HTTPS traffic, which the proxy tunnels untouched anyway. Leaves are issued only
 * for hosts the constraints cover. A CA minted before the constraints is loaded as it is.
 */
import { createHash, randomBytes, webcrypto, X509Certificate } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import type { SecureContext } from 'node:tls';
import { join } from 'node:path';
import { HostError } from '../../errors.js';
import { dnsNameCovered, nameConstraints, NAME_CONSTRAINTS_OID, permittedDnsNames } from './name-constraints.js';

type X509 = typeof import('@peculiar/x509');

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 86_400_000;
/** CA lifetime: ten years; a world outlives many leaves. */
const CA_DAYS = 3650;
/** Leaf lifetime: 90 days, under every client's cap (Apple's is 398); re-issued before it ends. */
const LEAF_DAYS = 90;
/** Backdated so a client whose clock runs a little behind still accepts a fresh leaf. */
const BACKDATE_MS = DAY;

/**
 * @peculiar/x509 resolves its algorithms through tsyringe, which insists on a Reflect
 * metadata API at load time. The library's classes take no constructor parameters, so a
 * few lines of metadata store serve it; installed only when no polyfill is present, and
 * only in the host (the app's attach entry never loads x509).
 */
function ensureReflectMetadata(): void {
  const r = Reflect as unknown as Record<string, unknown>;
  if (typeof r['getMetadata'] === 'function') return;
  const store = new WeakMap<object, Map<unknown, unknown>>();
  const own = (target: object, create: boolean): Map<unknown, unknown> | undefined => {
    let m = store.get(target);
    if (m === undefined && create) {
      m = new Map();
      store.set(target, m);
    }
    return m;
  };
  const getOwn = (key: unknown, target: object): unknown => own(target, false)?.get(key);
  const get = (key: unknown, target: object): unknown => {
    for (let t: object | null = target; t !== null; t = Object.getPrototypeOf(t) as object | null) {
      const m = own(t, false);
      if (m?.has(key) === true) return m.get(key);
    }
    return undefined;
  };
  const define = (key: unknown, value: unknown, target: object): void => {
    own(target, true)?.set(key, value);
  };
  Object.assign(r, {
    getMetadata: get,
    getOwnMetadata: getOwn,
    hasMetadata: (key: unknown, target: object) => get(key, target) !== undefined,
    hasOwnMetadata: (key: unknown, target: object) => getOwn(key, target) !== undefined,
    defineMetadata: define,
    metadata: (key: unknown, value: unknown) => (target: object) => define(key, value, target),
  });
}

let x509Loaded: Promise<X509> | null = null;
function loadX509(): Promise<X509> {
  if (x509Loaded === null) {
    ensureReflectMetadata();
    x509Loaded = import('@peculiar/x509').then((x509) => {
      x509.cryptoProvider.set(webcrypto as unknown as Crypto);
      return x509;
    });
  }
  return x509Loaded;
}

/** A positive 128-bit serial, as RFC 5280 asks (at most 20 bytes, high bit clear). */
function serial(): string {
  const b = randomBytes(16);
  b[0] = (b[0] as number) & 0x7f;
  return b.toString('hex');
}

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN ${label}-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END ${label}-----\n`;
}

/** PEM blocks are concatenated into chains and bundles: each must end with a newline. */
function endLine(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

function derOf(pemText: string, label: string): Buffer | null {
  const m = new RegExp(`-----BEGIN ${label}-----([A-Za-z0-9+/=\\s]+)-----END ${label}-----`).exec(pemText);
  return m === null ? null : Buffer.from((m[1] as string).replace(/\s+/g, ''), 'base64');
}

export interface WorldCa {
  /** The CA certificate, PEM. */
  readonly certPem: string;
  /** SHA-256 of the certificate's DER bytes, lower-case hex. */
  readonly sha256: string;
  /** The TLS context for one host: a leaf issued for it by this CA, cached while valid. */
  contextFor(host: string): Promise<SecureContext>;
  /** The leaf certificate (PEM) last issued for `host`, for tests and diagnostics. */
  leafPem(host: string): Promise<string>;
  /** The DNS names the CA may vouch for (each with its subdomains); null when it is not constrained. */
  readonly hosts: readonly string[] | null;
  /** Whether a leaf for `host` would pass a client's name-constraint check. */
  covers(host: string): boolean;
}

interface Leaf {
  certPem: string;
  context: SecureContext;
  renewAt: number;
}

/** Host names a leaf may be issued for: DNS names (no IP literals, no wildcards). */
const DNS_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

function makeCa(x509: X509, cert: InstanceType<X509['X509Certificate']>, caKey: CryptoKey, leafKeys: CryptoKeyPair, leafKeyPem: string, now: () => number): WorldCa {
  const certPem = endLine(cert.toString('pem'));
  const sha256 = createHash('sha256').update(Buffer.from(cert.rawData)).digest('hex');
  const leaves = new Map<string, Promise<Leaf>>();
  const constraints = cert.getExtension(NAME_CONSTRAINTS_OID);
  const hosts = constraints === null ? null : permittedDnsNames(new Uint8Array(constraints.value));
  const covers = (host: string): boolean => hosts === null || dnsNameCovered(host.toLowerCase(), hosts);

  const issue = async (host: string): Promise<Leaf> => {
    const at = now();
    const leaf = await x509.X509CertificateGenerator.create({
      serialNumber: serial(),
      subject: `CN=${host}`,
      issuer: cert.subject,
      notBefore: new Date(at - BACKDATE_MS),
      notAfter: new Date(at + LEAF_DAYS * DAY),
      signingKey: caKey,
      publicKey: leafKeys.publicKey,
      signingAlgorithm: ALG,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: host }]),
        await x509.AuthorityKeyIdentifierExtension.create(cert, false),
      ],
    });
    const leafPem = endLine(leaf.toString('pem'));
    // The chain holds the CA too, so a client that trusts it by fingerprint alone can build the path.
    const context = createSecureContext({ key: leafKeyPem, cert: `${leafPem}${certPem}` });
    return { certPem: leafPem, context, renewAt: at + (LEAF_DAYS - 7) * DAY };
  };

  const leafFor = (rawHost: string): Promise<Leaf> => {
    const host = rawHost.toLowerCase();
    if (!DNS_NAME.test(host)) return Promise.reject(new TypeError(`not a DNS name: ${JSON.stringify(rawHost.slice(0, 80))}`));
    // A client would refuse the leaf: say so here, where the reason is known.
    if (!covers(host)) return Promise.reject(new TypeError(`${host} is outside the names this CA may vouch for (${(hosts ?? []).join(', ') || 'none'})`));
    const cached = leaves.get(host);
    if (cached !== undefined) {
      return cached.then((leaf) => {
        if (leaf.renewAt > now()) return leaf;
        leaves.delete(host);
        return leafFor(host);
      });
    }
    const issuing = issue(host);
    leaves.set(host, issuing);
    // A failed issue is not cached: the next handshake tries again.
    issuing.catch(() => leaves.delete(host));
    return issuing;
  };

  return {
    certPem,
    sha256,
    contextFor: async (host) => (await leafFor(host)).context,
    leafPem: async (host) => (await leafFor(host)).certPem,
    hosts,
    covers,
  };
}

async function leafKeyPair(): Promise<{ keys: CryptoKeyPair; pem: string }> {
  // One leaf key per process: every leaf shares it, so a new host costs one signature, not a key.
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  return { keys, pem: pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)) };
}

async function generate(x509: X509, label: string, now: number, hosts: readonly string[]): Promise<{ cert: InstanceType<X509['X509Certificate']>; keys: CryptoKeyPair }> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: [{ CN: [label] }, { O: ['twinkit'] }],
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(now + CA_DAYS * DAY),
    keys,
    signingAlgorithm: ALG,
    extensions: [
      // pathLen 0: this CA signs leaves only, never another CA.
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      new x509.Extension(NAME_CONSTRAINTS_OID, true, nameConstraints(hosts)),
    ],
  });
  return { cert, keys };
}

export interface CaOptions {
  /** The CA's common name, e.g. `kit world local/shop`. */
  label?: string;
  /** The clock leaves are dated by (tests). Default `Date.now`. */
  now?: () => number;
  /**
   * The DNS names a new CA may vouch for, each with its subdomains (the twins' hosts); none
   * given, none. A CA loaded from disk keeps the names it was minted with.
   */
  hosts?: readonly string[];
}

/** The hosts option, checked: lower-case DNS names, no duplicates. */
function constrainedHosts(hosts: readonly string[] | undefined): string[] {
  const names = new Set<string>();
  for (const raw of hosts ?? []) {
    const host = raw.toLowerCase();
    if (!DNS_NAME.test(host)) throw new TypeError(`a CA host must be a DNS name: ${JSON.stringify(raw.slice(0, 80))}`);
    names.add(host);
  }
  return [...names].sort();
}

/** A CA kept in memory only (tests, throwaway servers). */
export async function createMemoryCa(options: CaOptions = {}): Promise<WorldCa> {
  const x509 = await loadX509();
  const now = options.now ?? Date.now;
  const { cert, keys } = await generate(x509, options.label ?? 'kit world CA', now(), constrainedHosts(options.hosts));
  const leaf = await leafKeyPair();
  return makeCa(x509, cert, keys.privateKey, leaf.keys, leaf.pem, now);
}

/** `<dir>/.kit/ca/`. */
export function caDir(dir: string): string {
  return join(dir, '.kit', 'ca');
}

async function writeAtomic(path: string, text: string, mode: number): Promise<void> {
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temp, 'wx', mode);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, path);
}

async function readOptional(path: string): Promise<string | null> {
  try {
    // A FIFO or a device in its place would block the read for ever: only a file is read.
    if (!(await stat(path)).isFile()) throw new HostError('ca_file_corrupt', `${path} is not a regular file; move the CA folder away to mint a new CA`);
    return await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/**
 * The world's CA from `<dir>/.kit/ca/`, generated on first use. A certificate whose key is
 * missing or unreadable is `ca_file_corrupt` and is never replaced: clients may trust it,
 * and silently minting a new one would break them in a way that is hard to see.
 */
export async function loadOrCreateCa(dir: string, options: CaOptions = {}): Promise<WorldCa> {
  const hosts = constrainedHosts(options.hosts);
  const x509 = await loadX509();
  const now = options.now ?? Date.now;
  const folder = caDir(dir);
  const certPath = join(folder, 'ca.pem');
  const keyPath = join(folder, 'ca-key.pem');
  const leaf = await leafKeyPair();

  const certText = await readOptional(certPath);
  if (certText === null) {
    // No certificate: nothing trusts this CA yet, so a key left by a crash mid-creation is discarded.
    await mkdir(folder, { recursive: true, mode: 0o700 });
    const { cert, keys } = await generate(x509, options.label ?? 'kit world CA', now(), hosts);
    const keyPem = pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
    await rm(keyPath, { force: true });
    // The key first: a certificate on disk means its key is there too.
    await writeAtomic(keyPath, keyPem, 0o600);
    await writeAtomic(certPath, endLine(cert.toString('pem')), 0o644);
    return makeCa(x509, cert, keys.privateKey, leaf.keys, leaf.pem, now);
  }

  const corrupt = (why: string): HostError =>
    new HostError('ca_file_corrupt', `${folder} holds a CA that cannot be used (${why}); move the folder away to mint a new CA (clients that trust the old one must then trust the new one)`);
  const certDer = derOf(certText, 'CERTIFICATE');
  if (certDer === null) throw corrupt('ca.pem is not a PEM certificate');
  let cert: InstanceType<X509['X509Certificate']>;
  try {
    cert = new x509.X509Certificate(new Uint8Array(certDer));
  } catch {
    throw corrupt('ca.pem does not parse');
  }
  // A certificate that may not sign others: every client would refuse the leaves it signs.
  if (!new X509Certificate(certDer).ca) throw corrupt('ca.pem is not a CA certificate (its basic constraints say CA:FALSE)');
  const keyText = await readOptional(keyPath);
  if (keyText === null) throw corrupt('ca-key.pem is missing');
  const keyDer = derOf(keyText, 'PRIVATE KEY');
  if (keyDer === null) throw corrupt('ca-key.pem is not a PKCS#8 PEM key');
  let caKey: CryptoKey;
  try {
    caKey = (await webcrypto.subtle.importKey('pkcs8', keyDer, ALG, false, ['sign'])) as CryptoKey;
  } catch {
    throw corrupt('ca-key.pem is not an ECDSA P-256 key');
  }
  // The key must be the certificate's: sign and verify one message.
  try {
    const probe = randomBytes(32);
    const sig = await webcrypto.subtle.sign(ALG, caKey, probe);
    const pub = new X509Certificate(certDer).publicKey.export({ format: 'der', type: 'spki' });
    const verifyKey = await webcrypto.subtle.importKey('spki', pub, ALG, false, ['verify']);
    if (!(await webcrypto.subtle.verify(ALG, verifyKey, sig, probe))) throw new Error('mismatch');
  } catch {
    throw corrupt('ca-key.pem is not the key of ca.pem');
  }
  // Someone may have loosened the mode; the key signs for any host, so tighten it back.
  if (((await stat(keyPath)).mode & 0o777) !== 0o600) await chmod(keyPath, 0o600);
  return makeCa(x509, cert, caKey, leaf.keys, leaf.pem, now);
}
