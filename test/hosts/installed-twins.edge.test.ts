/**
 * Installed twins (installed-twins.cases.ts) on the edge variant: the built Worker (dist/edge/) in
 * workerd through miniflare, restarted over its persisted Durable Objects (what an eviction leaves).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEdgeDev } from '../../host/edge/dev.js';
import { runInstalledTwinCases } from './installed-twins.cases.js';

runInstalledTwinCases({
  name: 'the edge variant',
  async start() {
    const dir = await mkdtemp(join(tmpdir(), 'kit-install-edge-'));
    const adminToken = `tok_a_${'i'.repeat(32)}`;
    const edge = await startEdgeDev({ port: 0, adminToken, persist: dir });
    return {
      get url() {
        return edge.url;
      },
      adminToken,
      // The Worker's request limit is 4 MiB, the bundle limit: its adapter refuses first.
      tooLargeCode: 'body_too_large',
      restart: () => edge.restart(),
      async close() {
        await edge.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
});
