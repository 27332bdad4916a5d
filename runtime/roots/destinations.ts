/**
 * Where a world may send a request (server-side request forgery): the syntactic check made when
 * a root or link URL is PUT and again before every outbound call, and the classifier a host
 * applies to every address a name resolves to, at connect time.
 *
 * Portable: nothing but `URL` (workerd runs it). The URL is parsed by the WHATWG parser, the same
 * one the connection is made from, so every legal spelling of an address (`2130706433`,
 * `0x7f.1`, `0177.0.0.1`, `127.1`, `[::ffff:7f00:1]`, full-width digits) is judged as the
 * address it normalises to, never as the text it was written in.
 *
 * The rules, in order: `https:` only (`http:` to a loopback host, and loopback at all, only where
 * the host allows it: local tests); no user name or password; a host that is an IP literal must
 * be public (loopback where allowed); a name must have a dot, must not be a cloud metadata name
 * nor one only a private network resolves (`.internal`, `.local`, `.home.arpa`); `localhost` and
 * `*.localhost` are loopback. A name is only a way to pick an address: where the host resolves
 * names itself (Node), each resolved address is judged again with `classifyAddress`.
 * Refusal messages name the rule and the host, never the path or query.
 *
 * `prepareOutboundCall` is the first step of every host's `OutboundFetch` (limits, this check,
 * the headers a request may carry), so the Node and workerd fetches apply one policy.
 */
import { KitError } from '../errors.js';
import type { OutboundLimits, OutboundRequest } from './outbound.js';

export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'reserved';

export interface DestinationOptions {
  /** Whether loopback destinations (and `http:` to them) are allowed: local tests only. */
  loopback: boolean;
  /**
   * Any http(s) host at all, private and dot-less names included: a local world's webhook
   * deliveries to the app's own receivers (`http://app:3000/hooks` in a compose network), which
   * the person who runs the world registered. Never a root's or a link's; never on a shared host.
   */
  anywhere?: boolean;
}

export type DestinationCheck = { ok: URL } | { code: 'destination_refused'; message: string };

interface Judged {
  class: AddressClass;
  /** What the address is, for a refusal: "a private address". */
  kind: string;
}

interface Range {
  bytes: Uint8Array;
  bits: number;
  judged: Judged;
}

/** An address as 4 or 16 bytes; null when `text` is not an IP literal. */
function parseLiteral(text: string): Uint8Array | null {
  // Only characters an address is written with: the URL parser below must not see `@`, `/`…
  const bare = text.replace(/%[^%]*$/, '').replace(/^\[(.*)\]$/, '$1');
  if (!/^[0-9a-fA-FxX.:]+$/.test(bare)) return null;
  let host: string;
  try {
    host = new URL(`http://${bare.includes(':') ? `[${bare}]` : bare}/`).hostname;
  } catch {
    return null;
  }
  return host.startsWith('[') ? parseCanonicalV6(host.slice(1, -1)) : parseDottedV4(host);
}

/** `a.b.c.d`, as the URL parser writes an IPv4 host; null for a name. */
function parseDottedV4(host: string): Uint8Array | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (m === null) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? new Uint8Array(parts) : null;
}

/** An IPv6 address as the URL parser writes it: lower-case hex groups, at most one `::`, no dotted tail. */
function parseCanonicalV6(text: string): Uint8Array | null {
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (s: string | undefined): number[] => (s === undefined || s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const left = groups(halves[0]);
  const right = groups(halves[1]);
  const fill = halves.length === 2 ? 8 - left.length - right.length : 0;
  const words = [...left, ...new Array<number>(Math.max(fill, 0)).fill(0), ...right];
  if (words.length !== 8 || words.some((w) => !Number.isInteger(w) || w < 0 || w > 0xffff)) return null;
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => {
    bytes[i * 2] = w >> 8;
    bytes[i * 2 + 1] = w & 0xff;
  });
  return bytes;
}

function inRange(a: Uint8Array, r: Range): boolean {
  if (a.length !== r.bytes.length) return false;
  let left = r.bits;
  for (let i = 0; left > 0; i++, left -= 8) {
    const mask = left >= 8 ? 0xff : (0xff << (8 - left)) & 0xff;
    if (((a[i] as number) & mask) !== ((r.bytes[i] as number) & mask)) return false;
  }
  return true;
}

function range(cidr: string, cls: AddressClass, kind: string): Range {
  const [net, bits] = cidr.split('/') as [string, string];
  const bytes = parseLiteral(net);
  if (bytes === null) throw new TypeError(`bad range ${cidr}`);
  return { bytes, bits: Number(bits), judged: { class: cls, kind } };
}

const METADATA = 'the cloud metadata address';

/** IPv4 special-purpose ranges (IANA, RFC 6890 and after); the first that matches judges. */
const V4: readonly Range[] = [
  range('0.0.0.0/8', 'reserved', 'an unspecified ("this network") address'),
  range('10.0.0.0/8', 'private', 'a private address'),
  range('100.64.0.0/10', 'private', 'a shared (carrier-grade NAT) address'),
  range('127.0.0.0/8', 'loopback', 'a loopback address'),
  range('169.254.169.254/32', 'link-local', METADATA),
  range('169.254.0.0/16', 'link-local', 'a link-local address'),
  range('172.16.0.0/12', 'private', 'a private address'),
  range('192.0.0.0/24', 'reserved', 'a reserved address'),
  range('192.0.2.0/24', 'reserved', 'a documentation address'),
  range('192.88.99.0/24', 'reserved', 'a reserved address'),
  range('192.168.0.0/16', 'private', 'a private address'),
  range('198.18.0.0/15', 'reserved', 'a benchmarking address'),
  range('198.51.100.0/24', 'reserved', 'a documentation address'),
  range('203.0.113.0/24', 'reserved', 'a documentation address'),
  range('224.0.0.0/4', 'reserved', 'a multicast address'),
  range('255.255.255.255/32', 'reserved', 'the broadcast address'),
  range('240.0.0.0/4', 'reserved', 'a reserved address'),
];

/** IPv6 ranges that carry an IPv4 address the network acts on: judged by that address. */
const V6_EMBEDDING: readonly { range: Range; offset: number }[] = [
  { range: range('::ffff:0:0/96', 'reserved', 'an IPv4-mapped'), offset: 12 },
  { range: range('64:ff9b::/96', 'reserved', 'a NAT64'), offset: 12 },
  { range: range('2002::/16', 'reserved', 'a 6to4'), offset: 2 },
];

/** IPv6 ranges judged as themselves; past them only global unicast (2000::/3) is public. */
const V6: readonly Range[] = [
  range('::/128', 'reserved', 'an unspecified address'),
  range('::1/128', 'loopback', 'a loopback address'),
  range('::/96', 'reserved', 'an IPv4-compatible address (deprecated)'),
  range('64:ff9b:1::/48', 'private', 'a local-use NAT64 address'),
  range('100::/64', 'reserved', 'a discard-only address'),
  range('2001:db8::/32', 'reserved', 'a documentation address'),
  range('2001::/23', 'reserved', 'a reserved address (Teredo, benchmarking, ORCHID)'),
  range('3fff::/20', 'reserved', 'a documentation address'),
  range('fd00:ec2::254/128', 'private', METADATA),
  range('fc00::/7', 'private', 'a private (unique local) address'),
  range('fe80::/10', 'link-local', 'a link-local address'),
  range('fec0::/10', 'private', 'a site-local address'),
  range('ff00::/8', 'reserved', 'a multicast address'),
];
const GLOBAL_UNICAST = range('2000::/3', 'public', '');
const PUBLIC: Judged = { class: 'public', kind: 'a public address' };

function judgeBytes(a: Uint8Array): Judged {
  if (a.length === 4) return V4.find((r) => inRange(a, r))?.judged ?? PUBLIC;
  for (const e of V6_EMBEDDING) {
    if (!inRange(a, e.range)) continue;
    const v4 = a.slice(e.offset, e.offset + 4);
    const inner = judgeBytes(v4);
    return inner.class === 'public' ? inner : { class: inner.class, kind: `${inner.kind} (${Array.from(v4).join('.')}, inside ${e.range.judged.kind} IPv6 address)` };
  }
  const named = V6.find((r) => inRange(a, r));
  if (named !== undefined) return named.judged;
  return inRange(a, GLOBAL_UNICAST) ? PUBLIC : { class: 'reserved', kind: 'not a global unicast address' };
}

function judgeAddress(ip: string): Judged {
  const bytes = parseLiteral(ip);
  if (bytes === null) throw new TypeError(`not an IP address: ${JSON.stringify(ip)}`);
  return judgeBytes(bytes);
}

/**
 * What an IP address is, as the network sees it (an IPv4 address inside a mapped, NAT64 or 6to4
 * IPv6 one is judged as that IPv4 address; a zone id is ignored). Throws a TypeError for text
 * that is not an IP address.
 */
export function classifyAddress(ip: string): AddressClass {
  return judgeAddress(ip).class;
}

/**
 * Why a connection to `ip` is refused ("10.0.0.1 is a private address"), or null when it may be
 * made: public, or loopback where `options.loopback`. For the check at connect time.
 */
export function addressRefusal(ip: string, options: DestinationOptions): string | null {
  if (options.anywhere === true) return null;
  const judged = judgeAddress(ip);
  if (judged.class === 'public' || (judged.class === 'loopback' && options.loopback)) return null;
  return `${ip} is ${judged.kind}${judged.class === 'loopback' ? ' (loopback is allowed for local tests only)' : ''}`;
}

/** Names of cloud metadata services (GCP, AWS, Tencent): refused whatever they resolve to. */
const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data', 'instance-data.ec2.internal', 'metadata.tencentyun.com']);
/** Suffixes only a private network resolves (RFC 6762 mDNS, RFC 8375, ICANN's `.internal`). */
const PRIVATE_SUFFIXES = ['.internal', '.local', '.home.arpa', '.localdomain'];

function refuse(message: string): DestinationCheck {
  return { code: 'destination_refused', message };
}

/**
 * The syntactic check of an outbound URL: `{ ok: url }` (the URL as parsed) or a refusal that says
 * which rule refused it. Run when a root or link URL is PUT and before every outbound call.
 */
export function checkDestinationUrl(url: string, options: DestinationOptions): DestinationCheck {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refuse('the destination is not an absolute URL');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return refuse(`the destination must be an https URL, not ${parsed.protocol}`);
  if (parsed.username !== '' || parsed.password !== '') return refuse('the destination URL carries a user name or password; credentials are sealed, never written in a URL');
  if (options.anywhere === true) return parsed.hostname === '' ? refuse('the destination URL names no host') : { ok: parsed };
  const host = parsed.hostname;
  let judged: Judged;
  if (host.startsWith('[') || parseDottedV4(host) !== null) {
    judged = judgeAddress(host);
  } else {
    // One trailing dot is the root of DNS (`localhost.` is `localhost`); anything else empty is malformed.
    const name = host.endsWith('.') ? host.slice(0, -1) : host;
    if (name === '' || name.split('.').some((label) => label === '')) return refuse(`the destination host ${host} is not a well-formed name`);
    if (name === 'localhost' || name.endsWith('.localhost')) judged = { class: 'loopback', kind: 'a loopback name' };
    else if (METADATA_NAMES.has(name)) return refuse(`the destination host ${host} names a cloud metadata service`);
    else if (PRIVATE_SUFFIXES.some((s) => name.endsWith(s))) return refuse(`the destination host ${host} is a name only a private network resolves`);
    else if (!name.includes('.')) return refuse(`the destination host ${host} has no dot: a local network's search domains would resolve it`);
    else judged = PUBLIC;
  }
  if (judged.class === 'loopback') {
    if (!options.loopback) return refuse(`the destination host ${host} is ${judged.kind}; loopback is allowed for local tests only`);
    return { ok: parsed };
  }
  if (judged.class !== 'public') return refuse(`the destination host ${host} is ${judged.kind}`);
  if (parsed.protocol !== 'https:') return refuse(`the destination must be an https URL (http is allowed to loopback only, for local tests)`);
  return { ok: parsed };
}

/** Headers an outbound exchange sets itself (framing, the host, the proxy's): a caller's are dropped. */
const EXCHANGE_HEADERS = new Set(['host', 'connection', 'keep-alive', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'content-length', 'expect']);

/** What every host's `OutboundFetch` does first. */
export interface PreparedCall {
  /** The destination, checked. */
  url: URL;
  /** Upper case. */
  method: string;
  /** `<METHOD> <origin>`: how errors name the call (never a path or query). */
  where: string;
  /** The request's headers, lower case, without the ones the exchange sets itself. */
  headers: Record<string, string>;
}

/**
 * Checks an outbound call before anything is opened: its limits (a TypeError: the caller's
 * mistake), its URL (`destination_refused`), and the headers it may carry.
 */
export function prepareOutboundCall(request: OutboundRequest, limits: OutboundLimits, options: DestinationOptions): PreparedCall {
  if (!(Number.isInteger(limits.timeoutMs) && limits.timeoutMs > 0)) throw new TypeError(`timeoutMs must be a positive integer, got ${limits.timeoutMs}`);
  if (!(Number.isInteger(limits.maxBytes) && limits.maxBytes >= 0)) throw new TypeError(`maxBytes must be a non-negative integer, got ${limits.maxBytes}`);
  const checked = checkDestinationUrl(request.url, options);
  if (!('ok' in checked)) throw new KitError('destination_refused', checked.message);
  const url = checked.ok;
  const method = request.method.toUpperCase();
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    const lower = name.toLowerCase();
    if (!EXCHANGE_HEADERS.has(lower)) headers[lower] = value;
  }
  return { url, method, where: `${method} ${url.origin}`, headers };
}
