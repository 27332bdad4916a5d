/**
 * The attach manifest: the answer of `GET {world_url}/.well-known/kit-world`, read by the
 * Node attach entry (`twinkit/attach`), by `kit world attach` and by the stream listeners.
 * The host builds it (host/attach/); this file is the shape both sides agree on, plus the
 * checks an attacher runs on a manifest it fetched (the world may be someone else's).
 *
 * Pure: no Node APIs, so any client (a browser tool, the edge) can import it.
 */

/** The world's certificate authority, for clients that reach a twin through the proxy. */
export interface AttachCa {
  /** The CA certificate, PEM. Never its private key. */
  pem: string;
  /** SHA-256 of the certificate's DER bytes, lower-case hex without separators. */
  sha256: string;
}

/** The world's HTTP CONNECT proxy, for any language (see docs/attach.md). */
export interface AttachProxy {
  /** `http://<host>:<port>` with no credentials: a client sends the world's token as the Basic password. */
  url: string;
  /** The hosts whose TLS the proxy terminates and answers from a twin; every other host is tunnelled untouched. */
  hosts: string[];
}

/**
 * One stream (a TCP-protocol twin, spec "What the service does" 6). The attacher listens on
 * loopback, fills in `env` with its listener's address and pipes each connection to `url`.
 */
export interface AttachStream {
  /** The WebSocket: `ws://…/-/<org>/<world>/streams/<id>`; its first message is the world's token. */
  url: string;
  /** The twin's protocol, e.g. `smtp`. */
  protocol: string;
  /**
   * The variables the twin's client reads, as templates: `{host}` and `{port}` stand for
   * the attacher's loopback listener, e.g. `{ SMTP_HOST: '{host}', SMTP_PORT: '{port}' }` or
   * `{ DBVENDOR_MYSQL_TWIN_URL: 'mysql://{host}:{port}' }`. Fill them with `fillStreamEnv`.
   */
  env: Record<string, string>;
}

export interface AttachManifest {
  /** The world's name. */
  name: string;
  /** Each vendor id → its twin's URL, `{world_url}/<vendor>`. */
  vendors: Record<string, string>;
  /**
   * Each twinned vendor host → the vendor id whose twin answers it (`api.stripe.com` →
   * `stripe`). The Node attach entry routes by it; the proxy terminates TLS for these hosts.
   */
  hosts: Record<string, string>;
  /** Null when the server runs no proxy (a host started without a CA). */
  ca: AttachCa | null;
  proxy: AttachProxy | null;
  /**
   * Variables for the app: `KIT_TWINS_KEY` (the token the manifest was asked with), and for
   * each HTTP twin whose client reads an endpoint variable, that variable → the twin's URL.
   */
  env: Record<string, string>;
  /** One per TCP-protocol twin, by stream id (the twin's vendor id, e.g. `smtp`). */
  streams: Record<string, AttachStream>;
}

/** Where a manifest is served: `{world_url}/.well-known/kit-world`. */
export const MANIFEST_PATH = '/.well-known/kit-world';

/** The manifest's URL for a world URL (a trailing slash on the world URL is fine). */
export function manifestUrl(worldUrl: string): string {
  return `${worldUrl.replace(/\/+$/, '')}${MANIFEST_PATH}`;
}

/** A stream's variables with `{host}` and `{port}` replaced by a listener's address. */
export function fillStreamEnv(stream: AttachStream, host: string, port: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, template] of Object.entries(stream.env)) {
    env[name] = template.replaceAll('{host}', host).replaceAll('{port}', String(port));
  }
  return env;
}

/** Environment variable names a client could read: letters, digits, underscores. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const HOST_NAME = /^[a-z0-9*]([a-z0-9.-]{0,251}[a-z0-9])?$/;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function stringMap(v: unknown, what: string, keyOk: (k: string) => boolean): Record<string, string> {
  if (!isRecord(v)) throw new ManifestError(`${what} is not an object`);
  const out: Record<string, string> = {};
  for (const [k, value] of Object.entries(v)) {
    if (!keyOk(k)) throw new ManifestError(`${what} has a bad name ${JSON.stringify(k.slice(0, 64))}`);
    if (typeof value !== 'string' || value.includes('\0')) throw new ManifestError(`${what}.${k} is not a string`);
    out[k] = value;
  }
  return out;
}

function httpUrl(v: unknown, what: string, schemes: readonly string[]): string {
  if (typeof v !== 'string') throw new ManifestError(`${what} is not a string`);
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new ManifestError(`${what} is not a URL`);
  }
  if (!schemes.includes(url.protocol)) throw new ManifestError(`${what} is not ${schemes.join(' or ')}`);
  return v;
}

/** A manifest that is not the shape above; `message` says which field. */
export class ManifestError extends Error {
  override readonly name = 'ManifestError';
  readonly code = 'invalid_manifest';
}

/**
 * Checks a fetched manifest field by field and returns it typed. The attacher acts on it
 * (routes the app's traffic, sets variables), so a malformed one is refused whole.
 */
export function parseAttachManifest(raw: unknown): AttachManifest {
  if (!isRecord(raw)) throw new ManifestError('the manifest is not a JSON object');
  if (typeof raw['name'] !== 'string' || raw['name'] === '') throw new ManifestError('name is not a string');
  const vendorsRaw = raw['vendors'];
  if (!isRecord(vendorsRaw)) throw new ManifestError('vendors is not an object');
  const vendors: Record<string, string> = {};
  for (const [k, v] of Object.entries(vendorsRaw)) {
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(k)) throw new ManifestError(`vendors has a bad vendor id ${JSON.stringify(k.slice(0, 64))}`);
    vendors[k] = httpUrl(v, `vendors.${k}`, ['http:', 'https:']);
  }
  const hostsRaw = raw['hosts'] ?? {};
  if (!isRecord(hostsRaw)) throw new ManifestError('hosts is not an object');
  const hosts: Record<string, string> = {};
  for (const [h, vendor] of Object.entries(hostsRaw)) {
    if (!HOST_NAME.test(h)) throw new ManifestError(`hosts has a bad host name ${JSON.stringify(h.slice(0, 64))}`);
    if (typeof vendor !== 'string' || vendors[vendor] === undefined) throw new ManifestError(`hosts.${h} names no vendor of the manifest`);
    hosts[h] = vendor;
  }
  let ca: AttachCa | null = null;
  if (raw['ca'] !== null && raw['ca'] !== undefined) {
    const c = raw['ca'];
    if (!isRecord(c) || typeof c['pem'] !== 'string' || !c['pem'].includes('-----BEGIN CERTIFICATE-----')) {
      throw new ManifestError('ca.pem is not a PEM certificate');
    }
    if (typeof c['sha256'] !== 'string' || !/^[0-9a-f]{64}$/.test(c['sha256'])) throw new ManifestError('ca.sha256 is not a SHA-256 in hex');
    ca = { pem: c['pem'], sha256: c['sha256'] };
  }
  let proxy: AttachProxy | null = null;
  if (raw['proxy'] !== null && raw['proxy'] !== undefined) {
    const p = raw['proxy'];
    if (!isRecord(p)) throw new ManifestError('proxy is not an object');
    const hosts = p['hosts'];
    if (!Array.isArray(hosts) || !hosts.every((h): h is string => typeof h === 'string' && HOST_NAME.test(h))) {
      throw new ManifestError('proxy.hosts is not a list of host names');
    }
    proxy = { url: httpUrl(p['url'], 'proxy.url', ['http:']), hosts: [...hosts] };
  }
  const env = stringMap(raw['env'], 'env', (k) => ENV_NAME.test(k));
  const streams: Record<string, AttachStream> = {};
  if (raw['streams'] !== undefined) {
    if (!isRecord(raw['streams'])) throw new ManifestError('streams is not an object');
    for (const [id, s] of Object.entries(raw['streams'])) {
      if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(id)) throw new ManifestError(`streams has a bad id ${JSON.stringify(id.slice(0, 64))}`);
      if (!isRecord(s)) throw new ManifestError(`streams.${id} is not an object`);
      const protocol = typeof s['protocol'] === 'string' ? s['protocol'] : id;
      streams[id] = {
        url: httpUrl(s['url'], `streams.${id}.url`, ['ws:', 'wss:']),
        protocol,
        env: stringMap(s['env'], `streams.${id}.env`, (k) => ENV_NAME.test(k)),
      };
    }
  }
  return { name: raw['name'], vendors, hosts, ca, proxy, env, streams };
}
