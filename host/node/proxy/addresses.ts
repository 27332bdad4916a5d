/**
 * Which addresses the CONNECT proxy may open a tunnel to. A tunnel is judged by the address it
 * connects to (after the proxy's own name resolution), never by the name the client sent: a
 * name is only a way to pick an address, and `2130706433`, `127.1`, `[::ffff:127.0.0.1]` or a
 * DNS answer of `127.0.0.1` are all loopback.
 *
 * IPv4: the special-purpose ranges of the IANA registry (RFC 6890 and after) are refused.
 * IPv6: only global unicast (2000::/3) is public, minus its special blocks; an IPv6 address
 * that carries an IPv4 one the network acts on (IPv4-mapped, NAT64 64:ff9b::/96, 6to4) is
 * judged by that IPv4 address. Anything else is refused: a forgotten range errs on refusal.
 */
import { isIP } from 'node:net';

/** An address, 4 or 16 bytes, as the network sees it. */
export interface ParsedAddress {
  family: 4 | 6;
  bytes: Uint8Array;
}

/** The bytes of an IPv4 or IPv6 literal (a zone id, `%eth0`, is dropped); null if it is not one. */
export function parseAddress(text: string): ParsedAddress | null {
  const address = text.replace(/%.*$/, '');
  const kind = isIP(address);
  if (kind === 4) return { family: 4, bytes: new Uint8Array(address.split('.').map(Number)) };
  if (kind !== 6) return null;
  // isIP has vouched for the syntax: at most one `::`, groups of 1–4 hex digits, an IPv4 tail.
  let head = address;
  const tail: number[] = [];
  const dotted = /:(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (dotted !== null) {
    const v4 = (dotted[1] as string).split('.').map(Number);
    tail.push(((v4[0] as number) << 8) | (v4[1] as number), ((v4[2] as number) << 8) | (v4[3] as number));
    // Keep a `::` just before the IPv4 tail; drop a lone `:`.
    head = address.slice(0, dotted.index + 1);
    if (!head.endsWith('::')) head = head.slice(0, -1);
  }
  const [left, right] = head.includes('::') ? (head.split('::') as [string, string]) : [head, null];
  const groups = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const l = groups(left);
  const r = right === null ? [] : groups(right);
  const words = right === null ? [...l, ...tail] : [...l, ...new Array<number>(8 - l.length - r.length - tail.length).fill(0), ...r, ...tail];
  if (words.length !== 8) return null;
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => {
    bytes[i * 2] = w >> 8;
    bytes[i * 2 + 1] = w & 0xff;
  });
  return { family: 6, bytes };
}

/** `a.b.c.d` or the RFC 5952 form of an IPv6 address. */
export function formatAddress(a: ParsedAddress): string {
  if (a.family === 4) return Array.from(a.bytes).join('.');
  const words: number[] = [];
  for (let i = 0; i < 16; i += 2) words.push(((a.bytes[i] as number) << 8) | (a.bytes[i + 1] as number));
  // The longest run of two or more zero words becomes `::`.
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (ws: number[]): string => ws.map((w) => w.toString(16)).join(':');
  if (best < 0) return hex(words);
  return `${hex(words.slice(0, best))}::${hex(words.slice(best + bestLen))}`;
}

/** Whether `a` lies in `net`/`bits` (same family). */
function inPrefix(a: Uint8Array, net: Uint8Array, bits: number): boolean {
  if (a.length !== net.length) return false;
  let left = bits;
  for (let i = 0; left > 0; i++, left -= 8) {
    const mask = left >= 8 ? 0xff : (0xff << (8 - left)) & 0xff;
    if (((a[i] as number) & mask) !== ((net[i] as number) & mask)) return false;
  }
  return true;
}

interface Range {
  net: Uint8Array;
  bits: number;
  /** What the address is, for the refusal's message: "127.0.0.1 is a loopback address". */
  kind: string;
}

function range(cidr: string, kind: string): Range {
  const [net, bits] = cidr.split('/') as [string, string];
  const parsed = parseAddress(net);
  if (parsed === null) throw new TypeError(`bad range ${cidr}`);
  return { net: parsed.bytes, bits: Number(bits), kind };
}

/** IPv4 ranges never tunnelled to; the first that matches names the kind. */
const V4_REFUSED: readonly Range[] = [
  range('0.0.0.0/32', 'an unspecified address'),
  range('0.0.0.0/8', 'a "this network" address'),
  range('10.0.0.0/8', 'a private address'),
  range('100.64.0.0/10', 'a shared (carrier-grade NAT) address'),
  range('127.0.0.0/8', 'a loopback address'),
  range('169.254.0.0/16', 'a link-local address'),
  range('172.16.0.0/12', 'a private address'),
  range('192.0.0.0/24', 'a reserved address'),
  range('192.0.2.0/24', 'a documentation address'),
  range('192.88.99.0/24', 'a reserved address'),
  range('192.168.0.0/16', 'a private address'),
  range('198.18.0.0/15', 'a benchmarking address'),
  range('198.51.100.0/24', 'a documentation address'),
  range('203.0.113.0/24', 'a documentation address'),
  range('224.0.0.0/4', 'a multicast address'),
  range('255.255.255.255/32', 'the broadcast address'),
  range('240.0.0.0/4', 'a reserved address'),
];

/** IPv6 ranges named for the message; everything outside 2000::/3 is refused anyway. */
const V6_REFUSED: readonly Range[] = [
  range('::/128', 'an unspecified address'),
  range('::1/128', 'a loopback address'),
  range('fe80::/10', 'a link-local address'),
  range('fec0::/10', 'a site-local address'),
  range('fc00::/7', 'a private (unique local) address'),
  range('ff00::/8', 'a multicast address'),
  range('64:ff9b:1::/48', 'a local-use NAT64 address'),
  range('100::/64', 'a discard-only address'),
  range('2001::/23', 'a reserved address (Teredo, benchmarking, ORCHID)'),
  range('2001:db8::/32', 'a documentation address'),
  range('3fff::/20', 'a documentation address'),
];
const GLOBAL_UNICAST = range('2000::/3', '');
const MAPPED = range('::ffff:0:0/96', '');
const NAT64 = range('64:ff9b::/96', '');
const SIX_TO_FOUR = range('2002::/16', '');

/**
 * The IPv4 address an IPv6 one stands for on the network, or null: IPv4-mapped
 * (`::ffff:a.b.c.d`, which a dual-stack socket connects to as IPv4), NAT64 (`64:ff9b::a.b.c.d`,
 * which a NAT64 gateway connects to) and 6to4 (`2002:aabb:ccdd::…`, relayed to a.b.c.d).
 */
export function embeddedV4(a: ParsedAddress): ParsedAddress | null {
  if (a.family !== 6) return null;
  if (inPrefix(a.bytes, MAPPED.net, MAPPED.bits) || inPrefix(a.bytes, NAT64.net, NAT64.bits)) return { family: 4, bytes: a.bytes.slice(12, 16) };
  if (inPrefix(a.bytes, SIX_TO_FOUR.net, SIX_TO_FOUR.bits)) return { family: 4, bytes: a.bytes.slice(2, 6) };
  return null;
}

/**
 * Why the proxy never tunnels to `address` ("a loopback address", …), or null when it is a
 * public address. Throws a TypeError for text that is not an IP address.
 */
export function refusedKind(address: string | ParsedAddress): string | null {
  const a = typeof address === 'string' ? parseAddress(address) : address;
  if (a === null) throw new TypeError(`not an IP address: ${String(address)}`);
  if (a.family === 4) return V4_REFUSED.find((r) => inPrefix(a.bytes, r.net, r.bits))?.kind ?? null;
  const v4 = embeddedV4(a);
  if (v4 !== null) {
    const kind = refusedKind(v4);
    return kind === null ? null : `${kind} (${formatAddress(v4)}, inside an IPv6 address)`;
  }
  const named = V6_REFUSED.find((r) => inPrefix(a.bytes, r.net, r.bits));
  if (named !== undefined) return named.kind;
  return inPrefix(a.bytes, GLOBAL_UNICAST.net, GLOBAL_UNICAST.bits) ? null : 'not a global unicast address';
}

/** An address (or a CIDR block) and optionally one port a tunnel may reach whatever its range. */
export interface TunnelAllowance {
  /** An IP address (`127.0.0.1`, `::1`), or a block (`10.0.0.0/8`). */
  address: string;
  /** Only this port; every port when left out. */
  port?: number;
}

/** A compiled allowance list: `allows(address, port)`. */
export class AllowList {
  readonly #entries: { net: Uint8Array; bits: number; port: number | null }[] = [];

  constructor(entries: readonly TunnelAllowance[]) {
    for (const e of entries) this.add(e);
  }

  add(entry: TunnelAllowance): void {
    const [net, bits] = entry.address.split('/') as [string, string | undefined];
    const parsed = parseAddress(net);
    const max = parsed?.family === 4 ? 32 : 128;
    const prefix = bits === undefined ? max : Number(bits);
    if (parsed === null || !Number.isInteger(prefix) || prefix < 0 || prefix > max) throw new TypeError(`a tunnel allowance needs an IP address or block, got "${entry.address}"`);
    if (entry.port !== undefined && !(Number.isInteger(entry.port) && entry.port >= 1 && entry.port <= 65535)) throw new TypeError(`a tunnel allowance's port must be 1–65535, got ${entry.port}`);
    // An IPv4-mapped entry is the IPv4 address it maps.
    const v4 = parsed.family === 6 && inPrefix(parsed.bytes, MAPPED.net, MAPPED.bits) && prefix >= 96 ? parsed.bytes.slice(12) : null;
    this.#entries.push(v4 === null ? { net: parsed.bytes, bits: prefix, port: entry.port ?? null } : { net: v4, bits: prefix - 96, port: entry.port ?? null });
  }

  allows(address: ParsedAddress, port: number): boolean {
    return this.#entries.some((e) => (e.port === null || e.port === port) && inPrefix(address.bytes, e.net, e.bits));
  }
}

/**
 * The address a tunnel connects to: an IPv4-mapped IPv6 address becomes its IPv4 address (the
 * connection it makes is an IPv4 one), anything else stays.
 */
export function unmapped(a: ParsedAddress): ParsedAddress {
  return a.family === 6 && inPrefix(a.bytes, MAPPED.net, MAPPED.bits) ? { family: 4, bytes: a.bytes.slice(12, 16) } : a;
}

/** A credential's reach: the world's token tunnels to public addresses, the read token to the world's own server only. */
export type TunnelScope = 'read' | 'write';

export type TunnelChoice =
  | { ok: true; address: ParsedAddress }
  | { ok: false; code: 'tunnel_refused' | 'forbidden'; address: string; kind: string | null };

/**
 * Picks the address a tunnel connects to from a name's resolved addresses (in the resolver's
 * order): the first the credential may reach. `own` is the world's own server (every
 * credential reaches it); `allow` is what the world's token reaches beyond public addresses.
 * Refused: `tunnel_refused` (every address is in a refused range), `forbidden` (the read
 * token, and none is the world's server). The first resolved address names the refusal.
 */
export function pickTunnelAddress(resolved: readonly string[], port: number, scope: TunnelScope, own: AllowList, allow: AllowList): TunnelChoice {
  let first: { address: string; kind: string | null } | null = null;
  for (const text of resolved) {
    const parsed = parseAddress(text);
    if (parsed === null) continue;
    const address = unmapped(parsed);
    if (own.allows(address, port)) return { ok: true, address };
    const kind = refusedKind(address);
    if (scope === 'write' && (kind === null || allow.allows(address, port))) return { ok: true, address };
    first ??= { address: formatAddress(address), kind };
  }
  if (first === null) return { ok: false, code: 'tunnel_refused', address: '', kind: 'no address' };
  return { ok: false, code: scope === 'read' ? 'forbidden' : 'tunnel_refused', ...first };
}
