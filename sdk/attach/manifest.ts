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

/**
 * A manifest an attacher must not act on. `invalid_manifest`: not the shape above (`message`
 * says which field). `manifest_refused`: well formed, but it asks for what no world may (a
 * variable outside the rule below, or the app pointed away from the world); `names` holds
 * the variables it would have set, when that is why.
 */
export class ManifestError extends Error {
  override readonly name = 'ManifestError';
  constructor(
    message: string,
    readonly code: 'invalid_manifest' | 'manifest_refused' = 'invalid_manifest',
    readonly names: readonly string[] = [],
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------------------------------
// What a world may ask of the attacher. The manifest comes from the network and the world
// may be someone else's: it may point the app's clients at itself and nothing more. Every
// variable it sets reaches the app's environment (and every process the app starts), so a
// name is taken only if it is KIT_TWINS_KEY or an endpoint variable, and never one that
// programs read as code, trust or where to fetch code from, whatever it ends in.

/** What an endpoint variable's name ends in (upper-cased): the twins' `models.endpointEnv` and the host's stream templates. */
const ENDPOINT_NAME = /^[A-Z][A-Z0-9_]*_(URL|URI|BASE|HOST|PORT|ENDPOINT|ADDR)$/;

/** Names refused outright (upper-cased), most of them no endpoint anyway: said out loud so no later pattern lets one in. */
const DENIED_NAMES = new Set([
  'PATH', 'HOME', 'SHELL', 'ENV', 'BASH_ENV', 'IFS', 'CDPATH', 'PS4', 'PROMPT_COMMAND', 'TMPDIR', 'TMP', 'TEMP', 'USER', 'LOGNAME',
  'EDITOR', 'VISUAL', 'PAGER', 'BROWSER', 'DISPLAY', 'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS', 'CLASSPATH', 'KUBECONFIG',
  'GOPROXY', 'GOFLAGS', 'GOSUMDB', 'GONOSUMDB', 'GOPRIVATE', 'GOINSECURE', 'GOTOOLCHAIN', 'KIT_WORLD', 'KIT_WORLD_TOKEN',
]);

/**
 * Prefixes refused (upper-cased): the loader (`LD_`, `DYLD_`), language runtimes (`NODE_`,
 * `PYTHON…`, `RUBY…`, `PERL…`, `JAVA_`), package managers and binary downloaders (a registry
 * or mirror URL is where they fetch code: `PIP_INDEX_URL`, `PLAYWRIGHT_DOWNLOAD_HOST`), tools
 * that run or reach code elsewhere (`DOCKER_HOST`, `GIT_`, `SSH_`, `KUBE…`, `DBUS_`), TLS
 * settings, telemetry, and kit's own (`KIT_`, except `KIT_TWINS_KEY`).
 */
const DENIED_PREFIXES = [
  'LD_', 'DYLD_', 'NODE_', 'NODEJS_', 'NVM_', 'NPM_', 'YARN_', 'PNPM_', 'COREPACK_', 'BUN_', 'DENO_', 'PYTHON', 'PIP_', 'UV_', 'CONDA_',
  'RUBY', 'GEM_', 'BUNDLE_', 'PERL', 'CARGO_', 'RUSTUP_', 'JAVA_', 'JDK_', 'MAVEN_', 'GRADLE_', 'COMPOSER_', 'NUGET_', 'DOTNET_',
  'HOMEBREW_', 'ELECTRON_', 'PUPPETEER_', 'PLAYWRIGHT_', 'CHROMEDRIVER_', 'SASS_', 'DOCKER_', 'CONTAINER_', 'PODMAN_', 'BUILDKIT_',
  'KUBE', 'GIT_', 'SSH_', 'GPG_', 'GNUPG', 'XDG_', 'DBUS_', 'SSL_', 'OPENSSL_', 'CURL_', 'WGET', 'REQUESTS_', 'OTEL_', 'BASH_', 'ZDOT',
  'SUDO_', 'SYSTEMD_', 'KIT_',
];

/** Words (between underscores, upper-cased) that mark a proxy or a trust setting anywhere in a name: `CORP_PROXY_URL`, `MY_CA_BUNDLE_URL`. */
const DENIED_WORDS = new Set(['PROXY', 'CA', 'CERT', 'CERTS', 'CAINFO', 'CAPATH', 'TLS', 'SSL', 'INSECURE']);

/** What the refusal says a world may set. */
const ENV_RULE =
  'a world sets only KIT_TWINS_KEY and endpoint variables, names ending in _URL, _URI, _BASE, _HOST, _PORT, _ENDPOINT or _ADDR, ' +
  "and never PATH, LD_*, NODE_*, proxies, CAs, package managers' settings or the like";

/**
 * Whether a world may set a variable of this name for the app: `KIT_TWINS_KEY`, or an
 * endpoint variable (`STRIPE_API_BASE`, `GITHUB_API_URL`, `SMTP_HOST`, `SMTP_PORT`, …) that
 * is none of the names programs read as code, trust or configuration (`PATH`, `LD_*`,
 * `NODE_*`, `PIP_INDEX_URL`, `DOCKER_HOST`, `*_PROXY*`, …). Case does not matter.
 */
export function envNameAllowed(name: string): boolean {
  if (!ENV_NAME.test(name)) return false;
  const upper = name.toUpperCase();
  if (upper === 'KIT_TWINS_KEY') return true;
  if (!ENDPOINT_NAME.test(upper)) return false;
  if (DENIED_NAMES.has(upper) || DENIED_PREFIXES.some((p) => upper.startsWith(p))) return false;
  return !upper.split('_').some((w) => DENIED_WORDS.has(w));
}

/** `localhost`, `::1` and `127.x.y.z`: one machine, however the app names it. */
export function isLoopbackHost(host: string): boolean {
  const h = bareHost(host);
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

function bareHost(hostname: string): string {
  const h = hostname.toLowerCase();
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h.endsWith('.') ? h.slice(0, -1) : h;
}

function sameHost(a: string, b: string): boolean {
  return bareHost(a) === bareHost(b) || (isLoopbackHost(a) && isLoopbackHost(b));
}

function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' || url.protocol === 'wss:' ? 443 : 80;
}

function hostPort(url: URL): string {
  return `${url.hostname}:${portOf(url)}`;
}

/** A value fit for the environment and a header: printable ASCII, no spaces, bounded. */
const PLAIN_VALUE = /^[\x21-\x7e]{1,2048}$/;

/** A stream variable's template: the attacher's loopback listener and nothing else. */
const STREAM_TEMPLATE = /^(\{host\}|\{port\}|([a-z][a-z0-9+.-]{0,31}:\/\/)?\{host\}:\{port\}(\/[A-Za-z0-9._~%/?=&+-]*)?)$/;

function refused(message: string, names: readonly string[] = []): ManifestError {
  return new ManifestError(message, 'manifest_refused', names);
}

function list(names: readonly string[]): string {
  const shown = names.slice(0, 8).map((n) => n.slice(0, 64));
  const more = names.length > shown.length ? ` and ${names.length - shown.length} more` : '';
  if (more !== '' || shown.length === 1) return `${shown.join(', ')}${more}`;
  return `${shown.slice(0, -1).join(', ')} and ${shown[shown.length - 1] as string}`;
}

/**
 * Enforces what a world may ask (see `envNameAllowed`): the variables' names, then their
 * values, then, knowing the world it came from, that every place the app or the token is
 * sent is that world.
 */
function checkPolicy(m: AttachManifest, worldUrl: string | undefined): void {
  const names = [...Object.keys(m.env), ...Object.values(m.streams).flatMap((s) => Object.keys(s.env))];
  const bad = [...new Set(names.filter((n) => !envNameAllowed(n)))];
  if (bad.length > 0) throw refused(`it sets ${list(bad)}, which no world may set (${ENV_RULE})`, bad);

  const endpoints: [string, URL][] = [];
  for (const [name, value] of Object.entries(m.env)) {
    if (name.toUpperCase() === 'KIT_TWINS_KEY') {
      if (!/^[\x21-\x7e]{1,4096}$/.test(value)) throw refused(`it sets ${name} to something that is not a token (printable, no spaces)`, [name]);
      continue;
    }
    let url: URL | null = null;
    try {
      url = PLAIN_VALUE.test(value) ? new URL(value) : null;
    } catch {
      url = null;
    }
    if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw refused(`it sets ${name} to something that is not an http(s) URL of the world`, [name]);
    if (url.username !== '' || url.password !== '') throw refused(`it sets ${name} to a URL with credentials in it`, [name]);
    endpoints.push([name, url]);
  }
  for (const [id, s] of Object.entries(m.streams)) {
    for (const [name, template] of Object.entries(s.env)) {
      if (!STREAM_TEMPLATE.test(template)) {
        throw refused(
          `streams.${id}.env.${name} is ${JSON.stringify(template.slice(0, 80))}, not the loopback listener ({host}, {port}, {host}:{port} or <scheme>://{host}:{port}/…)`,
          [name],
        );
      }
    }
  }
  if (m.proxy !== null) {
    const p = new URL(m.proxy.url);
    if (p.username !== '' || p.password !== '') throw refused('proxy.url has credentials in it (kit sends the token as its password)');
  }
  if (worldUrl === undefined) return;

  // Where the app and the token go: the world's host and port (the proxy: any port of its host).
  const world = new URL(worldUrl);
  const at = hostPort(world);
  const offWorld = (what: string, u: URL, names: string[] = []): ManifestError => refused(`it points ${what} at ${u.protocol}//${u.host}, not at the world (${at})`, names);
  const onWorld = (u: URL): boolean => sameHost(u.hostname, world.hostname) && portOf(u) === portOf(world);
  for (const [name, u] of endpoints) if (!onWorld(u)) throw offWorld(name, u, [name]);
  for (const [vendor, v] of Object.entries(m.vendors)) {
    const u = new URL(v);
    if (!onWorld(u)) throw offWorld(`vendors.${vendor}`, u);
  }
  for (const [id, s] of Object.entries(m.streams)) {
    const u = new URL(s.url);
    if (!onWorld(u)) throw offWorld(`streams.${id}.url`, u);
  }
  if (m.proxy !== null) {
    const u = new URL(m.proxy.url);
    if (!sameHost(u.hostname, world.hostname)) throw refused(`it points proxy.url at ${u.protocol}//${u.host}, not at the world's host (${world.hostname})`);
  }
}

/**
 * Checks a fetched manifest field by field and returns it typed. The attacher acts on it
 * (routes the app's traffic, sets variables), so a malformed one is refused whole, and so is
 * one that asks for what no world may (`envNameAllowed`; values that are not the world's
 * URLs or the stream listener). With `from.worldUrl`, the world it was fetched from, every
 * URL the app or the token is sent to must be that world's host and port (loopback names are
 * one host; the proxy may be on another port).
 */
export function parseAttachManifest(raw: unknown, from?: { worldUrl: string }): AttachManifest {
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
  const manifest: AttachManifest = { name: raw['name'], vendors, hosts, ca, proxy, env, streams };
  checkPolicy(manifest, from?.worldUrl);
  return manifest;
}
