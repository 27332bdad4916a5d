/**
 * A world's own origin (spec Authentication 6): `<world>--<org>.localhost:<port>` on this
 * machine, `<world>--<org><WORLD_ORIGIN_SUFFIX>` hosted. Its pages and its browser session live
 * there and nowhere else, so a page of one world never shares cookies or storage with another.
 */
import { NAME_PATTERN } from '../paths.js';

/** How a host gives its worlds origins. */
export interface WorldOriginRule {
  /** `http` on this machine, `https` hosted. */
  scheme: 'http' | 'https';
  /** What follows the label: `.localhost`, or the hosted suffix (`.worlds.example.com`). */
  suffix: string;
  /** The port in the origin; null for the scheme's own. */
  port: number | null;
  /**
   * The host listens on this machine's loopback only, so a request naming a `.localhost` origin
   * came from this machine: the world's page may open a write session without a token
   * (spec Authentication 7). Never true for a host other machines reach.
   */
  loopback: boolean;
}

/** A DNS label holds at most 63 characters. */
const MAX_LABEL = 63;

/**
 * The world's origin, or null when it can have none: a world whose name holds `--` (the label
 * would not say where the world's name ends) or whose label would be longer than a DNS label.
 */
export function worldOriginOf(rule: WorldOriginRule, org: string, world: string): string | null {
  if (world.includes('--')) return null;
  const label = `${world}--${org}`;
  if (label.length > MAX_LABEL) return null;
  return `${rule.scheme}://${label}${rule.suffix}${rule.port === null ? '' : `:${rule.port}`}`;
}

/**
 * The world whose origin a `Host` header names, or null. The label splits at its first `--`
 * (a world with an origin has none in its name); the port must be the rule's.
 */
export function worldAtHost(rule: WorldOriginRule, host: string | undefined): { org: string; world: string } | null {
  // Most requests name the host's own address: no `--`, no world origin (one scan, no allocation).
  if (host === undefined || !host.includes('--')) return null;
  const lower = host.toLowerCase();
  const colon = lower.lastIndexOf(':');
  const name = colon < 0 ? lower : lower.slice(0, colon);
  const port = colon < 0 ? null : Number(lower.slice(colon + 1));
  const schemePort = rule.scheme === 'https' ? 443 : 80;
  // A client leaves out the scheme's own port.
  if ((port ?? schemePort) !== (rule.port ?? schemePort)) return null;
  if (!name.endsWith(rule.suffix)) return null;
  const label = name.slice(0, name.length - rule.suffix.length);
  if (label.length > MAX_LABEL) return null;
  const split = label.indexOf('--');
  if (split <= 0) return null;
  const world = label.slice(0, split);
  const org = label.slice(split + 2);
  if (!NAME_PATTERN.test(world) || !NAME_PATTERN.test(org)) return null;
  return { org, world };
}

/** Loopback names and addresses a host may listen on. */
export function isLoopbackHost(host: string): boolean {
  return host === '127.0.0.1' || host === '::1' || host === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** The rule of a host on this machine listening at `host:port`. */
export function localOriginRule(listenHost: string, port: number): WorldOriginRule {
  return { scheme: 'http', suffix: '.localhost', port, loopback: isLoopbackHost(listenHost) };
}

/**
 * The rule of a hosted host: `WORLD_ORIGIN_SUFFIX` (`.worlds.example.com`), https, the scheme's port.
 * Null when the suffix is not a dot and a host name.
 */
export function hostedOriginRule(suffix: string): WorldOriginRule | null {
  const s = suffix.trim().toLowerCase();
  if (!/^\.[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(s) || s.length > 190) return null;
  return { scheme: 'https', suffix: s, port: null, loopback: false };
}

/** A Node host's `worldOriginSuffix` option as its rule; null when not given. Throws `TypeError` for one that is no suffix. */
export function hostedOriginOption(suffix: string | undefined): WorldOriginRule | null {
  if (suffix === undefined) return null;
  const rule = hostedOriginRule(suffix);
  if (rule === null) throw new TypeError(`worldOriginSuffix must be a dot and a host name (.worlds.example.com), got ${JSON.stringify(suffix)}`);
  return rule;
}
