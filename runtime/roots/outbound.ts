/**
 * The one way a world reaches outside itself (a root's refresh, a link's forward, webhook
 * deliveries, a deploy): a host gives its runner an `OutboundFetch`, which refuses destinations
 * it must not reach (server-side request forgery: private, link-local and metadata addresses,
 * checked again on every address a name resolves to) and caps time and size. The runner's
 * `Outbound` (roots/) adds the sealed credential on top; no twin code ever holds either.
 */

export interface OutboundRequest {
  method: string;
  /** Absolute `https:` URL (or `http:` to loopback where the host allows it). */
  url: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  body?: Uint8Array;
  /**
   * `vendor` (default): a root's read, a link's forward, a deploy. `webhook`: a delivery to a
   * receiver the app registered, which a host of this machine alone lets reach any http(s) host
   * (`webhooksAnywhere` of its fetch) and a shared host checks like the rest.
   */
  purpose?: 'vendor' | 'webhook';
}

export interface OutboundAnswer {
  status: number;
  /** Lower-case names; repeated headers joined with `, ` (set-cookie with `\n`). */
  headers: Record<string, string>;
  body: Uint8Array;
}

export interface OutboundLimits {
  /** The whole exchange, connect to last byte. */
  timeoutMs: number;
  /** An answer whose body passes this is refused (`outbound_too_large`). */
  maxBytes: number;
}

/**
 * Performs one request. Never follows a redirect (a 3xx is answered as it came). Rejects with
 * KitError `destination_refused` (a URL or an address it must not reach), `outbound_timeout`,
 * `outbound_too_large` or `outbound_failed` (no connection, TLS, a reset); the message never
 * carries a header's value.
 */
export type OutboundFetch = (request: OutboundRequest, limits: OutboundLimits) => Promise<OutboundAnswer>;
