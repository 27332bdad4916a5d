/**
 * What a fetched manifest may ask of the attacher (the world may be someone else's): which
 * variables it may set, to what, and where it may send the app and the token.
 */
import { describe, expect, it } from 'vitest';
import { buildAttachManifest } from '../../host/attach/manifest.js';
import { loadBuiltinTwins } from '../twin/build.js';
import { envNameAllowed, ManifestError, parseAttachManifest } from './manifest.js';

const WORLD = 'http://127.0.0.1:4440/local/shop';
const ca = { pem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n', sha256: 'ab'.repeat(32) };

/** A manifest as a local world serves it, with `extra` merged in. */
function manifest(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'shop',
    vendors: { stripe: `${WORLD}/stripe`, smtp: `${WORLD}/smtp` },
    hosts: { 'api.stripe.com': 'stripe' },
    ca,
    proxy: { url: 'http://127.0.0.1:4441', hosts: ['api.stripe.com'] },
    env: { KIT_TWINS_KEY: 'tok_x', STRIPE_API_BASE: `${WORLD}/stripe` },
    streams: { smtp: { url: 'ws://127.0.0.1:4440/-/local/shop/streams/smtp', protocol: 'smtp', env: { SMTP_HOST: '{host}', SMTP_PORT: '{port}' } } },
    ...extra,
  };
}

function refusal(raw: unknown, worldUrl?: string): ManifestError {
  try {
    parseAttachManifest(raw, worldUrl === undefined ? undefined : { worldUrl });
  } catch (e) {
    expect(e).toBeInstanceOf(ManifestError);
    return e as ManifestError;
  }
  throw new Error('the manifest was accepted');
}

describe('the variables a manifest may set', () => {
  it('refuses a manifest that sets PATH, LD_PRELOAD or NODE_TLS_REJECT_UNAUTHORIZED, naming each, in one line', () => {
    const e = refusal(manifest({ env: { KIT_TWINS_KEY: 't', PATH: '/tmp/world-bin', LD_PRELOAD: '/tmp/x.so', NODE_TLS_REJECT_UNAUTHORIZED: '0' } }));
    expect(e.code).toBe('manifest_refused');
    expect(e.names).toEqual(['PATH', 'LD_PRELOAD', 'NODE_TLS_REJECT_UNAUTHORIZED']);
    expect(e.message).toMatch(/^it sets PATH, LD_PRELOAD and NODE_TLS_REJECT_UNAUTHORIZED, which no world may set/);
    expect(e.message).not.toContain('\n');
  });

  it("refuses a stream's variable the same way (NODE_OPTIONS in streams.smtp.env)", () => {
    const e = refusal(manifest({ streams: { smtp: { url: 'ws://127.0.0.1:4440/-/local/shop/streams/smtp', env: { SMTP_HOST: '{host}', NODE_OPTIONS: '--import=data:text/javascript,1' } } } }));
    expect([e.code, e.names]).toEqual(['manifest_refused', ['NODE_OPTIONS']]);
  });

  it('takes only KIT_TWINS_KEY and endpoint names; the denylist wins over an endpoint-looking name', () => {
    const allowed = ['KIT_TWINS_KEY', 'STRIPE_API_BASE', 'GITHUB_API_URL', 'HELLO_API_URL', 'SMTP_HOST', 'SMTP_PORT', 'DBVENDOR_MYSQL_TWIN_URL', 'MONGO_URI', 'REDIS_ADDR', 'OTLP_LIKE_ENDPOINT', 'AWS_ENDPOINT_URL', 'stripe_api_base'];
    const refused = [
      // Not an endpoint variable at all.
      'FOO', 'DEBUG', 'HOSTNAME', 'PORT', '_URL', 'STRIPE_SECRET_KEY', 'BASH_ENV', 'ENV', 'HOME', 'SHELL', 'JAVA_TOOL_OPTIONS', 'PYTHONPATH', 'PERL5OPT', 'RUBYOPT',
      'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'SSL_CERT_FILE', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE', 'NODE_EXTRA_CA_CERTS', 'KIT_WORLD', 'KIT_WORLD_TOKEN',
      // Endpoint-looking, but programs fetch code or trust from them.
      'PATH', 'LD_LIBRARY_PATH', 'DYLD_INSERT_LIBRARIES', 'NODE_PORT', 'PIP_INDEX_URL', 'pip_extra_index_url', 'UV_INDEX_URL', 'NPM_CONFIG_REGISTRY_URL',
      'npm_config_proxy_host', 'PLAYWRIGHT_DOWNLOAD_HOST', 'PUPPETEER_DOWNLOAD_BASE_URL', 'ELECTRON_MIRROR_URL', 'DOCKER_HOST', 'KUBERNETES_SERVICE_HOST',
      'GIT_PROXY_URL', 'SSH_AUTH_HOST', 'HTTP_PROXY_HOST', 'CORP_PROXY_URL', 'MY_CA_BUNDLE_URL', 'CERT_SERVER_URL', 'PYTHON_INDEX_URL', 'RUBYGEMS_HOST',
      'GEM_SOURCE_URL', 'CARGO_REGISTRY_URL', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'KIT_WORLD_URL', 'XDG_RUNTIME_HOST', 'DBUS_SESSION_BUS_ADDR',
    ];
    for (const name of allowed) expect(envNameAllowed(name), name).toBe(true);
    for (const name of refused) expect(envNameAllowed(name), name).toBe(false);
  });

  it("accepts every variable the built-in twins declare, as the host builds their manifest", async () => {
    const builtins = await loadBuiltinTwins();
    const twins = [...builtins.values()].map((b) => ({
      vendor: b.manifest.vendor,
      protocol: b.manifest.protocol,
      hosts: b.manifest.models.hosts,
      ...(b.manifest.models.endpointEnv ? { endpointEnv: b.manifest.models.endpointEnv } : {}),
    }));
    expect(twins.flatMap((t) => t.endpointEnv ?? []).sort()).toEqual(expect.arrayContaining(['GITHUB_API_URL', 'HELLO_API_URL', 'SMTP_HOST', 'SMTP_PORT', 'STRIPE_API_BASE']));
    const built = buildAttachManifest({ name: 'shop', worldUrl: WORLD, worldApi: 'http://127.0.0.1:4440/-/local/shop', token: 'tok_x', twins, ca, proxyUrl: 'http://127.0.0.1:4441' });
    const raw = JSON.parse(JSON.stringify(built)) as unknown;
    expect(parseAttachManifest(raw, { worldUrl: WORLD })).toEqual(built);
    // The same world named as localhost (the router treats loopback names as one).
    expect(parseAttachManifest(raw, { worldUrl: 'http://localhost:4440/local/shop/' })).toEqual(built);
  });

  it('refuses a KIT_TWINS_KEY that could not be a header value', () => {
    expect(refusal(manifest({ env: { KIT_TWINS_KEY: 'tok\r\nx-evil: 1' } })).message).toMatch(/KIT_TWINS_KEY/);
  });
});

describe('where a manifest may point the app (checked against the world it was fetched from)', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['an endpoint on another host', { env: { STRIPE_API_BASE: 'https://evil.example/stripe' } }, /STRIPE_API_BASE at https:\/\/evil\.example, not at the world \(127\.0\.0\.1:4440\)/],
    ['an endpoint on another port of the world', { env: { STRIPE_API_BASE: 'http://127.0.0.1:9/stripe' } }, /STRIPE_API_BASE/],
    ['an endpoint with credentials in it', { env: { STRIPE_API_BASE: 'http://u:p@127.0.0.1:4440/stripe' } }, /STRIPE_API_BASE/],
    ['an endpoint that is a file', { env: { STRIPE_API_BASE: 'file:///etc/passwd' } }, /STRIPE_API_BASE/],
    ['an endpoint with a line break', { env: { STRIPE_API_BASE: `${WORLD}/stripe\nX=1` } }, /STRIPE_API_BASE/],
    ['a twin on another host (it would get the token)', { vendors: { stripe: 'http://evil.example/stripe' }, env: { KIT_TWINS_KEY: 't' }, streams: {} }, /vendors\.stripe/],
    ['a stream on another host (its first message is the token)', { streams: { smtp: { url: 'ws://evil.example:4440/s', env: {} } } }, /streams\.smtp\.url/],
    ['a proxy on another host (it gets the token as its password)', { proxy: { url: 'http://evil.example:4441', hosts: [] } }, /proxy\.url/],
    ['a stream variable not at the listener', { streams: { smtp: { url: 'ws://127.0.0.1:4440/-/local/shop/streams/smtp', env: { SMTP_HOST: 'evil.example' } } } }, /streams\.smtp\.env\.SMTP_HOST/],
  ];
  for (const [what, extra, message] of cases) {
    it(`refuses ${what}`, () => {
      const e = refusal(manifest(extra), WORLD);
      expect(e.code).toBe('manifest_refused');
      expect(e.message).toMatch(message);
    });
  }

  it('takes the listener templates the host builds, and a proxy on another port of the world', () => {
    const m = parseAttachManifest(
      manifest({
        streams: {
          db: { url: 'ws://127.0.0.1:4440/-/local/shop/streams/db', protocol: 'mysql', env: { DB_HOST: '{host}', DB_PORT: '{port}', DB_TWIN_URL: 'mysql://{host}:{port}', DB_ADDR: '{host}:{port}', DB_URI: 'mysql://{host}:{port}/shop' } },
        },
      }),
      { worldUrl: WORLD },
    );
    expect(m.proxy?.url).toBe('http://127.0.0.1:4441');
    expect(Object.keys(m.streams['db']?.env ?? {})).toHaveLength(5);
  });
});
