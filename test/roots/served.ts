/**
 * A world of one built-in twin behind the single-world server, with its own CA and proxy, on
 * the wall clock (vendors sign their webhooks with it, and a copy checks their age against it):
 * the "real" vendor of test/roots/, or the copy rooted at it. `proxyTo` gives a copy the way to
 * the real one's vendor host (`api.stripe.com`): through the real world's proxy, trusting its CA.
 * `'loopback'` gives a world the way to other worlds served on this machine, over http, with a
 * sealing key of its own: a world whose origin is another served world (test/changesets/).
 */
import { startSingleWorldServer, type SingleWorldServer } from '../../host/single-world.js';
import { createMemoryCa } from '../../host/node/proxy/ca.js';
import { createNodeOutbound } from '../../runtime/roots/node-outbound.js';
import { createSealer, newSealingKey, sealingKeyBytes } from '../../runtime/roots/sealing.js';
import { loadBuiltinTwins } from '../../sdk/twin/build.js';
import { openTestWorld, type TestWorld } from '../helpers/world.js';

export interface Served {
  world: TestWorld;
  server: SingleWorldServer;
  caPem: string;
}

export async function serveVendorWorld(vendor: string, name: string, tokens: { token: string; readToken: string }, proxyTo?: { world: Served; token: string } | 'loopback'): Promise<Served> {
  const manifest = (await loadBuiltinTwins()).get(vendor)!.manifest;
  let roots = {};
  if (proxyTo === 'loopback') {
    roots = { outbound: createNodeOutbound({ loopback: true }), outboundLoopback: true, sealer: createSealer(sealingKeyBytes(newSealingKey())) };
  } else if (proxyTo !== undefined) {
    const proxy = new URL(proxyTo.world.server.proxy!.url);
    proxy.username = 'kit';
    proxy.password = proxyTo.token;
    roots = {
      outbound: createNodeOutbound({ loopback: false, proxy: { url: proxy.href.replace(/\/$/, ''), ca: proxyTo.world.caPem } }),
      sealer: createSealer(sealingKeyBytes(newSealingKey())),
    };
  }
  const world = await openTestWorld({ vendors: [vendor], world: name, now: Date.now, ...roots });
  const ca = await createMemoryCa({ label: `kit world acme/${name}`, hosts: manifest.models.hosts });
  const server = await startSingleWorldServer({
    world: world.runner,
    org: 'acme',
    worldName: name,
    tokens,
    twins: [{ vendor, requestScopes: manifest.requestScopes, protocol: manifest.protocol, hosts: manifest.models.hosts, ...(manifest.models.endpointEnv ? { endpointEnv: manifest.models.endpointEnv } : {}) }],
    ca,
    proxyPort: 0,
    budget: false,
  });
  return { world, server, caPem: ca.certPem };
}

/** A world API call with a token, as a client sends it. */
export async function worldApi(s: Served, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any; text: string }> { // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience
  const res = await fetch(`${s.server.worldApi}${path}`, {
    method,
    headers: { 'x-kit-token': token, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? undefined : JSON.parse(text), text };
}
