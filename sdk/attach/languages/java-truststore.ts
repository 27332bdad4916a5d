/**
 * Java trust stores read and written in Node, so attaching costs no JVM start (keytool takes
 * 1–1.5 s on a busy two-core machine) for the many commands that are not Java at all.
 *
 * Read: JKS (what JDK 8–17's and Debian's, Ubuntu's and Red Hat's `cacerts` are) and a
 * password-less PKCS#12 whose certificates are not encrypted (JDK 18 and later's `cacerts`).
 * Anything else (an encrypted PKCS#12, JCEKS, a store with keys) answers null: the caller
 * asks keytool instead. Written: a password-less PKCS#12 (no MAC, certificates in the clear,
 * as JDK 18's `cacerts` is), each certificate marked trusted the way the JDK marks its own.
 */

/** A trusted certificate: its alias and DER bytes. */
export interface TrustedCert {
  alias: string;
  der: Buffer;
}

const OID = {
  data: '1.2.840.113549.1.7.1',
  certBag: '1.2.840.113549.1.12.10.1.3',
  x509Certificate: '1.2.840.113549.1.9.22.1',
  friendlyName: '1.2.840.113549.1.9.20',
  // The JDK's own mark of a trusted certificate entry in PKCS#12 (without it, Java skips the certificate).
  oracleTrustedKeyUsage: '2.16.840.1.113894.746875.1.1',
  anyExtendedKeyUsage: '2.5.29.37.0',
};

// --- DER, the few types a trust store needs -------------------------------------------------

function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), derLength(content.length), content]);
}

const sequence = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
const octets = (bytes: Buffer): Buffer => tlv(0x04, bytes);
const explicit0 = (inner: Buffer): Buffer => tlv(0xa0, inner);
const integer = (n: number): Buffer => tlv(0x02, Buffer.from([n]));

function bmpString(text: string): Buffer {
  const bytes = Buffer.alloc(text.length * 2);
  for (let i = 0; i < text.length; i++) bytes.writeUInt16BE(text.charCodeAt(i), i * 2);
  return tlv(0x1e, bytes);
}

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out: number[] = [40 * (parts[0] as number) + (parts[1] as number)];
  for (const part of parts.slice(2)) {
    const base128: number[] = [];
    let n = part;
    do {
      base128.unshift(n % 128);
      n = Math.floor(n / 128);
    } while (n > 0);
    for (let i = 0; i < base128.length - 1; i++) base128[i] = (base128[i] as number) | 0x80;
    out.push(...base128);
  }
  return tlv(0x06, Buffer.from(out));
}

interface Node {
  tag: number;
  content: Buffer;
}

class DerError extends Error {}

/** One TLV at `at`: its tag, content and where the next begins. Definite lengths only (DER). */
function readTlv(bytes: Buffer, at: number): Node & { next: number } {
  if (at + 2 > bytes.length) throw new DerError('truncated');
  const tag = bytes[at] as number;
  let length = bytes[at + 1] as number;
  let start = at + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4 || start + count > bytes.length) throw new DerError('bad length');
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + (bytes[start + i] as number);
    start += count;
  }
  if (start + length > bytes.length) throw new DerError('truncated');
  return { tag, content: bytes.subarray(start, start + length), next: start + length };
}

function children(node: Node): Node[] {
  const out: Node[] = [];
  for (let at = 0; at < node.content.length; ) {
    const child = readTlv(node.content, at);
    out.push(child);
    at = child.next;
  }
  return out;
}

function expect(node: Node | undefined, tag: number): Node {
  if (node === undefined || node.tag !== tag) throw new DerError(`expected tag ${tag}`);
  return node;
}

function oidText(node: Node | undefined): string {
  const content = expect(node, 0x06).content;
  const first = content[0] as number;
  const parts = [Math.min(2, Math.floor(first / 40)), first - 40 * Math.min(2, Math.floor(first / 40))];
  let n = 0;
  for (const byte of content.subarray(1)) {
    n = n * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) {
      parts.push(n);
      n = 0;
    }
  }
  return parts.join('.');
}

// --- PKCS#12 ----------------------------------------------------------------------------------

function certBag(cert: TrustedCert): Buffer {
  const value = sequence(oid(OID.x509Certificate), explicit0(octets(cert.der)));
  const attributes = set(
    sequence(oid(OID.friendlyName), set(bmpString(cert.alias))),
    sequence(oid(OID.oracleTrustedKeyUsage), set(oid(OID.anyExtendedKeyUsage))),
  );
  return sequence(oid(OID.certBag), explicit0(value), attributes);
}

/**
 * A password-less PKCS#12 trust store holding `certs`, each a trusted certificate entry under
 * its alias (aliases are made unique, lower-case, as Java's are). Java loads it with no
 * `javax.net.ssl.trustStorePassword`.
 */
export function writePkcs12TrustStore(certs: readonly TrustedCert[]): Buffer {
  const seen = new Set<string>();
  const bags = certs.map((cert) => {
    const base = cert.alias.toLowerCase();
    let alias = base;
    for (let n = 2; seen.has(alias); n++) alias = `${base}-${n}`;
    seen.add(alias);
    return certBag({ alias, der: cert.der });
  });
  const safeContents = sequence(...bags);
  const authenticatedSafe = sequence(sequence(oid(OID.data), explicit0(octets(safeContents))));
  return sequence(integer(3), sequence(oid(OID.data), explicit0(octets(authenticatedSafe))));
}

/** The trusted certificates of a PKCS#12 store, or null when it holds what Node cannot read without a password (encrypted contents, keys). */
function readPkcs12(bytes: Buffer): TrustedCert[] | null {
  const pfx = children(expect(readTlv(bytes, 0), 0x30));
  const authSafe = children(expect(pfx[1], 0x30));
  if (oidText(authSafe[0]) !== OID.data) return null; // signed (public-key integrity mode)
  const inner = expect(children(expect(authSafe[1], 0xa0))[0], 0x04).content;
  const out: TrustedCert[] = [];
  for (const info of children(expect(readTlv(inner, 0), 0x30))) {
    const [type, content] = children(expect(info, 0x30));
    if (oidText(type) !== OID.data) return null; // encrypted: needs the password
    const safeContents = expect(children(expect(content, 0xa0))[0], 0x04).content;
    for (const bag of children(expect(readTlv(safeContents, 0), 0x30))) {
      const [bagId, bagValue, attributes] = children(expect(bag, 0x30));
      if (oidText(bagId) !== OID.certBag) return null; // a key (or a secret): a keystore, not a trust store
      const [certId, certValue] = children(expect(children(expect(bagValue, 0xa0))[0], 0x30));
      if (oidText(certId) !== OID.x509Certificate) continue;
      const der = Buffer.from(expect(children(expect(certValue, 0xa0))[0], 0x04).content);
      let alias: string | null = null;
      let trusted = false;
      for (const attribute of attributes ? children(expect(attributes, 0x31)) : []) {
        const [attrId, values] = children(expect(attribute, 0x30));
        const id = oidText(attrId);
        if (id === OID.oracleTrustedKeyUsage) trusted = true;
        if (id === OID.friendlyName) {
          const name = expect(children(expect(values, 0x31))[0], 0x1e).content;
          alias = '';
          for (let i = 0; i + 1 < name.length; i += 2) alias += String.fromCharCode(name.readUInt16BE(i));
        }
      }
      // Java treats a certificate without the mark (and with no key) as no entry at all.
      if (trusted) out.push({ alias: alias ?? `cert-${out.length + 1}`, der });
    }
  }
  return out;
}

// --- JKS --------------------------------------------------------------------------------------

const JKS_MAGIC = 0xfeedfeed;

/** The trusted certificates of a JKS store, or null when it holds keys (their certificates would need the key's entry). */
function readJks(bytes: Buffer): TrustedCert[] | null {
  let at = 0;
  const u32 = (): number => {
    if (at + 4 > bytes.length) throw new DerError('truncated JKS');
    const n = bytes.readUInt32BE(at);
    at += 4;
    return n;
  };
  const utf = (): string => {
    if (at + 2 > bytes.length) throw new DerError('truncated JKS');
    const n = bytes.readUInt16BE(at);
    if (at + 2 + n > bytes.length) throw new DerError('truncated JKS');
    const text = bytes.subarray(at + 2, at + 2 + n).toString('utf8');
    at += 2 + n;
    return text;
  };
  if (u32() !== JKS_MAGIC) return null;
  const version = u32();
  if (version !== 1 && version !== 2) return null;
  const count = u32();
  const out: TrustedCert[] = [];
  for (let i = 0; i < count; i++) {
    const tag = u32();
    if (tag !== 2) return null; // 1: a private key entry
    const alias = utf();
    at += 8; // the entry's date
    if (version === 2 && utf() !== 'X.509') return null;
    const length = u32();
    if (at + length > bytes.length) throw new DerError('truncated JKS');
    out.push({ alias, der: Buffer.from(bytes.subarray(at, at + length)) });
    at += length;
  }
  return out;
}

/**
 * The trusted certificates of a Java key store file's bytes (JKS or PKCS#12, told apart by
 * their first bytes, as Java does), or null when Node cannot read this one without keytool.
 * Corrupt bytes are null too: keytool then says what is wrong with them.
 */
export function readTrustStore(bytes: Buffer): TrustedCert[] | null {
  try {
    if (bytes.length >= 4 && bytes.readUInt32BE(0) === JKS_MAGIC) return readJks(bytes);
    if (bytes[0] === 0x30) return readPkcs12(bytes);
    return null;
  } catch (e) {
    if (e instanceof DerError) return null;
    throw e;
  }
}

/** The certificates of a PEM text, in order (each `BEGIN CERTIFICATE` block's DER bytes). */
export function pemCertificates(pem: string): Buffer[] {
  const out: Buffer[] = [];
  for (const m of pem.matchAll(/-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+)-----END CERTIFICATE-----/g)) {
    out.push(Buffer.from((m[1] as string).replace(/\s+/g, ''), 'base64'));
  }
  return out;
}
