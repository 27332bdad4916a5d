/**
 * The shared world-endpoint cases against the edge variant: the built Worker (dist/edge/) in
 * workerd through miniflare, as `kit edge dev` runs it, each world made through `POST /-/worlds`
 * with the admin token. A world "nobody used for a while" is what Cloudflare does to idle
 * objects: evicted, here by restarting workerd, and only what the objects stored is left.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEdgeDev } from '../../host/edge/dev.js';
import { startPassIssuer } from '../../sdk/passes/index.js';
import { FIXTURE_VENDORS, send } from './fixture.js';
import { runWorldEndpointCases } from './world-endpoints.cases.js';

runWorldEndpointCases({
  name: 'the edge variant',
  lacks: {},
  skip: [
    {
      reason: "workerd makes the request's URL from its Host header, so a forged Host is another URL before the Worker sees it (on Cloudflare, a Host that is not the Worker's route never reaches it)",
      cases: ['authentication: the vendor wire > tells the twin where the client addressed it: the Host it sent, else the published address'],
    },
  ],
  async start() {
    const dir = await mkdtemp(join(tmpdir(), 'kit-hosts-edge-'));
    const adminToken = `tok_a_${'e'.repeat(32)}`;
    const passIssuer = await startPassIssuer();
    const edge = await startEdgeDev({ port: 0, adminToken, persist: dir, trustedIssuers: [passIssuer.url] });
    let made = 0;
    return {
      adminToken,
      passIssuer,
      // Cloudflare evicts an object seconds after its last request, never sooner: a second here.
      idle: async () => {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        await edge.restart();
      },
      async openWorld(options = {}) {
        const org = 'acme';
        const world = `shop-${++made}`;
        const admin = { 'x-kit-token': adminToken };
        const a = await send('POST', `${edge.url}/-/worlds`, { headers: admin, body: { org, world, vendors: FIXTURE_VENDORS } });
        if (a.status !== 201) throw new Error(`POST /-/worlds answered ${a.status}: ${a.text}`);
        const row = a.json() as { name: string; token: string; readToken: string };
        if (options.budget !== undefined) {
          const b = await send('PUT', `${edge.url}/-/worlds/${row.name}/budget`, { headers: admin, body: { budget: options.budget } });
          if (b.status !== 200) throw new Error(`PUT …/budget answered ${b.status}: ${b.text}`);
        }
        return { name: row.name, org, world, base: edge.url, url: `${edge.url}/${row.name}`, api: `${edge.url}/-/${row.name}`, token: row.token, readToken: row.readToken };
      },
      async close() {
        await edge.close();
        await passIssuer.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
});
