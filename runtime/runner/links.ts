/**
 * A world's links: `{world_url}/<name>/…` forwarded to a real vendor's origin with the
 * credential sealed at `…/twins/<name>/credential`, whose headers replace the caller's
 * same-named ones. Stateless: no log, no tree. Only the world's own credential opens one (a
 * read token, a read key or a browser session does not). Kept under
 * `['#runner', <world>, 'link', <name>]`.
 */
import { KitError } from '../errors.js';
import type { Key } from '../store/index.js';
import { LINK_NAME, parseLink, type LinkConfig } from '../roots/config.js';
import { callVendor } from '../roots/vendor-call.js';
import type { RootHost, RootService } from './services.js';
import type { WorldRequest, WorldResponse } from './types.js';

/** A world's most links. */
export const MAX_LINKS = 50;
/** A forwarded answer's most bytes. */
const MAX_FORWARD_BYTES = 32 * 1024 * 1024;
const FORWARD_TIMEOUT_MS = 60_000;

/** Headers of the connection, or of twinkit, that never go to the vendor nor come back from it. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'content-length', 'proxy-connection']);

interface StoredLink extends LinkConfig {
  createdAt: string;
}

export class LinkSet {
  constructor(
    private readonly host: RootHost,
    private readonly roots: RootService,
  ) {}

  private key(name?: string): Key {
    return name === undefined ? ['#runner', this.host.name, 'link'] : ['#runner', this.host.name, 'link', name];
  }

  has(name: string): boolean {
    return LINK_NAME.test(name) && this.host.storage.get(this.key(name)) !== undefined;
  }

  list(): { links: { name: string; origin: string; createdAt: string; credential: { sealed: boolean; sealedAt: string | null } }[] } {
    const prefix = this.key();
    const links = [];
    for (const { key, value } of this.host.storage.range<StoredLink>({ start: prefix, end: [...prefix, '\uffff'] })) {
      const name = String(key[key.length - 1]);
      links.push({ name, origin: value.origin, createdAt: value.createdAt, credential: this.roots.credentialStatus(name) });
    }
    return { links };
  }

  put(name: string, body: unknown): StoredLink & { name: string } {
    if (!LINK_NAME.test(name)) throw new KitError('invalid_link', `A link's name is lower-case letters, digits and '-', 2 to 40 characters, starting with a letter (got '${name.slice(0, 60)}').`);
    if (this.host.twins.has(name)) throw new KitError('link_names_twin', `'${name}' is a twin of this world; a link takes another name.`);
    const link = parseLink(body, this.roots.loopback);
    const existing = this.host.storage.get<StoredLink>(this.key(name));
    if (existing === undefined && this.list().links.length >= MAX_LINKS) throw new KitError('too_many_links', `A world has at most ${MAX_LINKS} links; remove one first.`);
    const stored: StoredLink = { origin: link.origin, createdAt: existing?.createdAt ?? new Date(this.host.wallClock()).toISOString() };
    this.host.storage.transact((tx) => tx.put(this.key(name), stored));
    return { name, ...stored };
  }

  /** Removes the link and the credential sealed for it. */
  delete(name: string): void {
    if (!this.has(name)) throw new KitError('unknown_link', `This world has no link '${name.slice(0, 60)}'.`);
    this.host.storage.transact((tx) => {
      tx.remove(this.key(name));
      tx.remove(['#runner', this.host.name, 'credential', name]);
    });
  }

  /** Forwards a vendor-wire request at `/<name><rest>` to the link's origin. */
  async forward(name: string, req: WorldRequest, rest: string): Promise<WorldResponse> {
    const link = this.host.storage.get<StoredLink>(this.key(name));
    if (link === undefined) throw new KitError('unknown_link', `This world has no link '${name.slice(0, 60)}'.`);
    if (req.scope !== 'write' || req.credential === 'session') throw new KitError('link_needs_token', `The link '${name}' forwards with a real credential: it opens to the world's token (or a key that may write), not a read token or a browser session.`);
    const headers: Record<string, string> = {};
    for (const [header, value] of Object.entries(req.headers)) {
      if (HOP_BY_HOP.has(header) || header.startsWith('x-kit-') || header === 'x-twins-key' || header === 'cookie') continue;
      headers[header] = value;
    }
    // The world's token never leaves: where it came as the app's API key, that key is dropped.
    if (req.headers['x-kit-auth'] === 'authorization') delete headers['authorization'];
    const url = link.origin + rest + (req.query === '' ? '' : `?${req.query}`);
    const credential = await this.roots.openCredential(name);
    const answer = await callVendor(this.roots.outbound(), { method: req.method, url, headers, ...(req.body !== undefined && req.body.length > 0 ? { body: req.body } : {}) }, credential, { timeoutMs: FORWARD_TIMEOUT_MS, maxBytes: MAX_FORWARD_BYTES });
    const out: Record<string, string> = {};
    for (const [header, value] of Object.entries(answer.headers)) if (!HOP_BY_HOP.has(header)) out[header] = value;
    return { status: answer.status, headers: out, body: answer.body };
  }
}
