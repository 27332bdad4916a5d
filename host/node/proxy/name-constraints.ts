/**
 * The X.509 name-constraints extension (RFC 5280 §4.2.1.10) the world CA carries, written and
 * read as DER by hand: @peculiar/x509 has no class for it, and the shape is a few nested
 * tag-length-value triples.
 *
 * NameConstraints ::= SEQUENCE { permittedSubtrees [0] GeneralSubtrees OPTIONAL,
 *                                excludedSubtrees  [1] GeneralSubtrees OPTIONAL }
 * GeneralSubtree  ::= SEQUENCE { base GeneralName, ... }   (minimum and maximum left out)
 * GeneralName     ::= ... dNSName [2] IA5String ... iPAddress [7] OCTET STRING ...
 */

export const NAME_CONSTRAINTS_OID = '2.5.29.30';

const SEQUENCE = 0x30;
const PERMITTED = 0xa0;
const EXCLUDED = 0xa1;
const DNS_NAME = 0x82;
const IP_ADDRESS = 0x87;

function tlv(tag: number, content: Uint8Array): Uint8Array {
  const n = content.length;
  const head = n < 0x80 ? [tag, n] : n < 0x100 ? [tag, 0x81, n] : [tag, 0x82, n >> 8, n & 0xff];
  if (n > 0xffff) throw new RangeError('name constraints too long');
  const out = new Uint8Array(head.length + n);
  out.set(head, 0);
  out.set(content, head.length);
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const subtree = (tag: number, base: Uint8Array): Uint8Array => tlv(SEQUENCE, tlv(tag, base));

/**
 * The extension's value: DNS names `hosts` (and their subdomains) permitted, every IP address
 * excluded (so no leaf for an IP literal passes either). With no hosts, every DNS name is
 * excluded (an empty dNSName matches all), since a permitted list cannot be empty.
 */
export function nameConstraints(hosts: readonly string[]): ArrayBuffer {
  const ipExcluded = [subtree(IP_ADDRESS, new Uint8Array(8)), subtree(IP_ADDRESS, new Uint8Array(32))];
  const parts: Uint8Array[] = [];
  if (hosts.length > 0) parts.push(tlv(PERMITTED, concat(hosts.map((h) => subtree(DNS_NAME, new TextEncoder().encode(h))))));
  parts.push(tlv(EXCLUDED, concat([...(hosts.length > 0 ? [] : [subtree(DNS_NAME, new Uint8Array(0))]), ...ipExcluded])));
  const der = tlv(SEQUENCE, concat(parts));
  return der.buffer.slice(der.byteOffset, der.byteOffset + der.byteLength) as ArrayBuffer;
}

interface Node {
  tag: number;
  content: Uint8Array;
}

/** The TLVs in `bytes`, in order; null when they do not parse (lengths past the end, long forms over two bytes). */
function children(bytes: Uint8Array): Node[] | null {
  const out: Node[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (at + 2 > bytes.length) return null;
    const tag = bytes[at] as number;
    let n = bytes[at + 1] as number;
    at += 2;
    if (n === 0x81 || n === 0x82) {
      const width = n - 0x80;
      if (at + width > bytes.length) return null;
      n = width === 1 ? (bytes[at] as number) : ((bytes[at] as number) << 8) | (bytes[at + 1] as number);
      at += width;
    } else if (n >= 0x80) return null;
    if (at + n > bytes.length) return null;
    out.push({ tag, content: bytes.subarray(at, at + n) });
    at += n;
  }
  return out;
}

/**
 * The permitted DNS names of a name-constraints value, lower case. A value that does not
 * parse, or permits no DNS name, permits none: the CA then vouches for nothing.
 */
export function permittedDnsNames(value: Uint8Array): string[] {
  const top = children(value);
  if (top === null || top.length !== 1 || top[0]?.tag !== SEQUENCE) return [];
  const names: string[] = [];
  for (const part of children(top[0].content) ?? []) {
    if (part.tag !== PERMITTED) continue;
    for (const sub of children(part.content) ?? []) {
      const base = sub.tag === SEQUENCE ? children(sub.content)?.[0] : undefined;
      if (base?.tag === DNS_NAME && base.content.length > 0) names.push(new TextDecoder('latin1').decode(base.content).toLowerCase());
    }
  }
  return names;
}

/** Whether `host` is one of `names` or below one of them, label by label, as a client checks it. */
export function dnsNameCovered(host: string, names: readonly string[]): boolean {
  return names.some((name) => host === name || host.endsWith(`.${name}`));
}
