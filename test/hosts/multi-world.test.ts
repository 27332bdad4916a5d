/**
 * The shared world-endpoint cases against the multi-world host, started as `kit host serve`
 * starts it (every built-in twin, the guest runtime), each world made through `POST /-/worlds`
 * with the admin token, all of them under one URL.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMultiWorldHost } from '../../host/index.js';
import { createPassVerifier } from '../../host/core/access/passes.js';
import { startPassIssuer } from '../../sdk/passes/index.js';
import { buildGuestRuntime, loadBuiltinTwins } from '../../sdk/twin/node.js';
import { FIXTURE_VENDORS, send } from './fixture.js';
import { runWorldEndpointCases } from './world-endpoints.cases.js';

runWorldEndpointCases({
  name: 'the multi-world host',
  lacks: {},
  skip: [],
  async start() {
    const dir = await mkdtemp(join(tmpdir(), 'kit-hosts-multi-'));
    const passIssuer = await startPassIssuer();
    const host = await startMultiWorldHost({
      outboundLoopback: true,
      dir,
      port: 0,
      twins: [...(await loadBuiltinTwins()).values()],
      guestRuntime: await buildGuestRuntime(),
      passes: createPassVerifier({ trusted: [passIssuer.url] }),
    });
    let made = 0;
    return {
      adminToken: host.adminToken,
      passIssuer,
      // What the pool does to a world idle past its idleMs.
      idle: (w) => host.pool.close(w.name),
      async openWorld(options = {}) {
        const org = 'acme';
        const world = `shop-${++made}`;
        const admin = { 'x-kit-token': host.adminToken };
        const a = await send('POST', `${host.url}/-/worlds`, { headers: admin, body: { org, world, vendors: FIXTURE_VENDORS } });
        if (a.status !== 201) throw new Error(`POST /-/worlds answered ${a.status}: ${a.text}`);
        const row = a.json() as { name: string; token: string; readToken: string };
        if (options.budget !== undefined) {
          const b = await send('PUT', `${host.url}/-/worlds/${row.name}/budget`, { headers: admin, body: { budget: options.budget } });
          if (b.status !== 200) throw new Error(`PUT …/budget answered ${b.status}: ${b.text}`);
        }
        return { name: row.name, org, world, base: host.url, url: `${host.url}/${row.name}`, api: `${host.url}/-/${row.name}`, token: row.token, readToken: row.readToken };
      },
      async close() {
        await host.close();
        await passIssuer.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
});
