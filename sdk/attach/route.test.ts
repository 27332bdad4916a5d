import { describe, expect, it } from 'vitest';
import type { AttachManifest } from './manifest.js';
import { createRouter, twinPath } from './route.js';

const manifest: AttachManifest = {
  name: 'shop',
  vendors: { stripe: 'http://127.0.0.1:4440/local/shop/stripe', github: 'http://127.0.0.1:4440/local/shop/github' },
  hosts: { 'api.stripe.com': 'stripe', 'api.github.com': 'github' },
  ca: null,
  proxy: null,
  env: { KIT_TWINS_KEY: 't' },
  streams: {},
};
const router = createRouter(manifest, 'http://127.0.0.1:4440/local/shop', 't');

describe('createRouter', () => {
  it('sends a twinned host, any case, port or trailing dot, to its twin', () => {
    for (const [host, port] of [['api.stripe.com', 443], ['API.Stripe.COM', 8443], ['api.stripe.com.', 80]] as const) {
      const d = router.decide(host, port, '/v1/customers?limit=1');
      expect(d).toEqual({ kind: 'twin', target: { protocol: 'http:', hostname: '127.0.0.1', port: 4440, origin: 'http://127.0.0.1:4440', prefix: '/local/shop/stripe' } });
    }
    const gh = router.decide('api.github.com', 443, '/repos/a/b');
    expect(gh.kind === 'twin' && twinPath(gh.target, '/repos/a/b?x=1')).toBe('/local/shop/github/repos/a/b?x=1');
  });

  it("marks the world's own paths (vendor wire and world API), on its address or another loopback name", () => {
    for (const path of ['/local/shop/stripe/v1/customers', '/local/shop/.well-known/kit-world', '/-/local/shop/clock', '/-/local/shop?x=1']) {
      expect(router.decide('127.0.0.1', 4440, path)).toEqual({ kind: 'world' });
    }
    expect(router.decide('localhost', 4440, '/local/shop/stripe/x')).toEqual({ kind: 'world' });
  });

  it('passes everything else untouched: other hosts, other ports, other worlds on the same server', () => {
    for (const [host, port, path] of [
      ['example.com', 443, '/local/shop/stripe'],
      ['stripe.com', 443, '/'],
      ['api.stripe.com.evil.test', 443, '/'],
      ['127.0.0.1', 4441, '/local/shop/x'],
      ['127.0.0.1', 4440, '/local/shopping/x'],
      ['127.0.0.1', 4440, '/-/local/other/clock'],
      ['10.0.0.1', 4440, '/local/shop/x'],
    ] as const) {
      expect(router.decide(host, port, path), `${host}:${port}${path}`).toEqual({ kind: 'pass' });
    }
  });
});
