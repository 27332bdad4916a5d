/**
 * Installed twins (installed-twins.cases.ts) on the multi-world host, restarted over its folder,
 * with a request limit above the bundle limit (8 MiB), so a bundle over 4 MiB meets the admin's own
 * check (`twin_too_large`) rather than the adapter's (`body_too_large`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMultiWorldHost, type MultiWorldHost } from '../../host/index.js';
import { buildGuestRuntime, loadBuiltinTwins } from '../../sdk/twin/node.js';
import { runInstalledTwinCases } from './installed-twins.cases.js';

runInstalledTwinCases({
  name: 'the multi-world host',
  async start() {
    const dir = await mkdtemp(join(tmpdir(), 'kit-install-multi-'));
    const twins = [...(await loadBuiltinTwins()).values()];
    const guestRuntime = await buildGuestRuntime();
    const start = async (): Promise<MultiWorldHost> => startMultiWorldHost({ dir, port: 0, twins, guestRuntime, maxBodyBytes: 8 * 1024 * 1024 });
    let host = await start();
    return {
      get url() {
        return host.url;
      },
      get adminToken() {
        return host.adminToken;
      },
      tooLargeCode: 'twin_too_large',
      async restart() {
        await host.close();
        host = await start();
      },
      async close() {
        await host.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
});
