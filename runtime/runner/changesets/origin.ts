/**
 * The world a world was made from, reached through its world API: the origin named by
 * `PUT …/origin` (`https://<host>/<org>/<world>` and its token, the token sealed), called
 * through the host's outbound fetch like any vendor. The token is sent as `x-kit-token` and
 * never answered back.
 */
import { KitError, isKitError } from '../../errors.js';
import { destinationUrl } from '../../roots/config.js';
import type { OutboundFetch } from '../../roots/outbound.js';

const ORIGIN_TIMEOUT_MS = 30_000;
/** A page of the origin's log, or a changeset's answer. */
const ORIGIN_MAX_BYTES = 64 * 1024 * 1024;

export interface OriginAnswer {
  status: number;
  body: unknown;
}

/** A world's URL read: the world API below it (`…/-/<org>/<world>`). */
export function originApiUrl(raw: unknown, loopback: boolean): { url: string; api: string; world: string } {
  const url = destinationUrl(raw, 'url', loopback, 'invalid_origin');
  const segments = url.pathname.split('/').filter((s) => s !== '');
  if (segments.length < 2 || url.search !== '' || url.hash !== '' || segments.includes('-')) {
    throw new KitError('invalid_origin', "'url' names a world: https://<host>/<org>/<world>.", { param: 'url' });
  }
  const prefix = segments.slice(0, -2);
  const [org, world] = segments.slice(-2) as [string, string];
  const clean = `${url.origin}${prefix.map((s) => `/${s}`).join('')}/${org}/${world}`;
  return { url: clean, api: `${url.origin}${prefix.map((s) => `/${s}`).join('')}/-/${org}/${world}`, world: `${org}/${world}` };
}

export class OriginClient {
  constructor(
    private readonly fetch: OutboundFetch,
    private readonly api: string,
    private readonly token: string,
  ) {}

  /** One call to the origin's world API; its answer parsed. A refusal of the token is `origin_refused`. */
  async call(method: string, path: string, body?: unknown): Promise<OriginAnswer> {
    const headers: Record<string, string> = { 'x-kit-token': this.token, accept: 'application/json', 'user-agent': 'twinkit-origin/1' };
    let bytes: Uint8Array | undefined;
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      bytes = new TextEncoder().encode(JSON.stringify(body));
    }
    let answer;
    try {
      answer = await this.fetch({ method, url: `${this.api}${path}`, headers, ...(bytes !== undefined ? { body: bytes } : {}) }, { timeoutMs: ORIGIN_TIMEOUT_MS, maxBytes: ORIGIN_MAX_BYTES });
    } catch (e) {
      const message = isKitError(e) ? e.message : e instanceof Error ? e.message : String(e);
      throw new KitError(isKitError(e) && e.code === 'destination_refused' ? 'destination_refused' : 'origin_unreachable', `The origin did not answer: ${message.split(this.token).join('[sealed]')}`);
    }
    const text = new TextDecoder().decode(answer.body);
    let parsed: unknown = null;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      throw new KitError('invalid_origin', `The origin answered ${method} ${path} with something that is not JSON (status ${answer.status}); is it a twinkit world?`);
    }
    if (answer.status === 401 || answer.status === 403) {
      throw new KitError('origin_refused', `The origin refused the token (${answer.status}).`, { status: answer.status });
    }
    return { status: answer.status, body: parsed };
  }

  /** A GET that must succeed. */
  async read(path: string): Promise<unknown> {
    const r = await this.call('GET', path);
    if (r.status !== 200) {
      const code = (r.body as { error?: { code?: string } } | null)?.error?.code;
      if (r.status === 404 && path === '/map') throw new KitError('invalid_origin', 'The origin has no world API at that URL; is it a twinkit world?');
      throw new KitError('origin_unreachable', `The origin answered GET ${path} with ${r.status}${code ? ` (${code})` : ''}.`, { status: r.status });
    }
    return r.body;
  }
}
