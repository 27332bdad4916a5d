/**
 * What the shared world-endpoint cases (world-endpoints.cases.ts) need of a host, and the one
 * way they reach it: plain HTTP on the socket the host listens on (node:http, so a case may
 * send any `Host`, a doubled slash or a HEAD and read the answer as the bytes came).
 */
import { request as httpRequest } from 'node:http';
import type { PassIssuer } from '../../sdk/passes/index.js';

/** A world a host serves, as its owner knows it: its URLs and its two tokens. */
export interface HostWorld {
  /** `<org>/<world>`. */
  readonly name: string;
  readonly org: string;
  readonly world: string;
  /** `{base_url}` of the host that serves it. */
  readonly base: string;
  /** `{world_url}`. */
  readonly url: string;
  /** `{world_api}`. */
  readonly api: string;
  readonly token: string;
  readonly readToken: string;
}

/** The built-in twins every fixture's world serves. */
export const FIXTURE_VENDORS = ['github', 'hello', 'smtp', 'stripe'];

export interface OpenWorldOptions {
  /** The world's request budget (`3/1m`); default the host's own (none on the single-world server). */
  budget?: string;
}

/** A started host. */
export interface HostFixture {
  /**
   * A new world with the built-in twins of `FIXTURE_VENDORS`, its clock unset. On a host of
   * many worlds it is served beside the others; on the single-world server it is a server of
   * its own.
   */
  openWorld(options?: OpenWorldOptions): Promise<HostWorld>;
  /**
   * Lets the world go as its host lets a world nobody uses go: the multi-world host closes it
   * (its pool), to open it again on its next request; the single-world server keeps its one
   * world open, and does nothing.
   */
  idle(world: HostWorld): Promise<void>;
  /** The host's admin token, where it has an admin surface (`/-/worlds`). */
  readonly adminToken: string | null;
  /** An issuer of passes the host trusts (`--trust`, `TRUSTED_ISSUERS`), started with it. */
  readonly passIssuer: PassIssuer;
  close(): Promise<void>;
}

/** What a host does not do: each names why, and the cases that need it are skipped saying so. */
export interface HostLacks {
  /** Two worlds under one `{base_url}`. */
  secondWorld?: string;
  /** `…/branches`. */
  branches?: string;
  /** The admin surface under `/-/`. */
  admin?: string;
}

/** A host as the cases see it before it starts: what it lacks must be known when cases are listed. */
export interface HostFixtureSpec {
  /** Shown in every case's name. */
  readonly name: string;
  readonly lacks: HostLacks;
  /** Cases (by their full name, `group > case`) skipped on this host alone, each group with its reason. */
  readonly skip?: readonly { reason: string; cases: readonly string[] }[];
  start(): Promise<HostFixture>;
}

/** An answer as it came off the socket. */
export interface Answer {
  status: number;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  text: string;
  /** The body parsed as JSON (throws when it is not). */
  json(): any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience
}

export interface SendOptions {
  headers?: Record<string, string>;
  /** An object is sent as JSON (with its content-type unless one is given). */
  body?: string | Uint8Array | object;
}

/** One request over a connection of its own. `url` is sent as written: doubled slashes stay. */
export function send(method: string, url: string, options: SendOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(options.headers ?? {})) headers[k.toLowerCase()] = v;
  let body: Uint8Array | undefined;
  const given = options.body;
  if (typeof given === 'string') body = Buffer.from(given, 'utf8');
  else if (given instanceof Uint8Array) body = given;
  else if (given !== undefined) {
    body = Buffer.from(JSON.stringify(given), 'utf8');
    headers['content-type'] ??= 'application/json';
  }
  if (body !== undefined) headers['content-length'] = String(body.byteLength);
  const target = new URL(url);
  // The path as written: `new URL` keeps doubled slashes, but a caller may also have meant them.
  const path = url.slice(url.indexOf('/', url.indexOf('//') + 2));
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: target.hostname, port: target.port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const flat: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: flat, text, json: () => JSON.parse(text) });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The `error.code` of an answer in the host's and the world's error shape, if it has one. */
export function errorCode(a: Answer): string | undefined {
  try {
    return (a.json() as { error?: { code?: unknown } }).error?.code as string | undefined;
  } catch {
    return undefined;
  }
}
