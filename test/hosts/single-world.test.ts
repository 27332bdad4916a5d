/**
 * The shared world-endpoint cases against the single-world server, started as `kit world serve`
 * starts it (sdk/cli/serve.ts: the world's directory, its token file, its CA and proxy), each
 * world a server of its own on a free port.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseBudget } from '../../host/index.js';
import { openLocalWorld } from '../../runtime/runner/index.js';
import { serveWorld, type ServingWorld } from '../../sdk/cli/serve.js';
import { startPassIssuer } from '../../sdk/passes/index.js';
import { buildGuestRuntime, loadBuiltinTwins } from '../../sdk/twin/node.js';
import { FIXTURE_VENDORS } from './fixture.js';
import { runWorldEndpointCases } from './world-endpoints.cases.js';

runWorldEndpointCases({
  name: 'the single-world server',
  lacks: {
    secondWorld: 'it serves one world',
    branches: 'it makes no branches (…/branches answers 404, as the matrix asserts)',
    admin: 'it has no admin surface and no admin token',
  },
  async start() {
    const builtins = await loadBuiltinTwins();
    const guestRuntime = await buildGuestRuntime();
    const passIssuer = await startPassIssuer();
    const served: ServingWorld[] = [];
    const dirs: string[] = [];
    return {
      adminToken: null,
      passIssuer,
      // A served world stays open as long as its server.
      idle: async () => undefined,
      async openWorld(options = {}) {
        const dir = await mkdtemp(join(tmpdir(), 'kit-hosts-single-'));
        dirs.push(dir);
        const budget = options.budget === undefined ? false : parseBudget(options.budget);
        const s = await serveWorld(
          { dir, port: 0, host: '127.0.0.1', org: 'acme', world: 'shop', twins: FIXTURE_VENDORS, trustedIssuers: [passIssuer.url], ...(budget !== false ? { budget } : {}) },
          { loadTwins: async () => builtins, openWorld: (options) => openLocalWorld({ ...options, guestRuntime }) },
        );
        served.push(s);
        const { server, tokens } = s;
        return { name: `${s.org}/${s.world}`, org: s.org, world: s.world, base: server.url, url: server.worldUrl, api: server.worldApi, token: tokens.token, readToken: tokens.readToken };
      },
      async close() {
        await Promise.all(served.map((s) => s.server.close()));
        await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
        await passIssuer.close();
      },
    };
  },
});
