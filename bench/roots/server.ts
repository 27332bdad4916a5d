/**
 * Worlds served as `kit world serve <dir> --port 0 --world <world>` serves each by default, in a
 * process of their own: each through the CLI's `serveWorld` (every built-in twin, the world in the
 * server's thread, LMDB under `<dir>/.kit/world/`, its sealing key beside it, roots allowed to
 * name loopback), with the CLI's `openWorld` (sdk/cli/kit.ts). The token file is written first
 * with the bench's tokens (serveWorld keeps an existing one).
 *
 *   node dist/bench/roots/server.js <dir> <world> <token> <customers> [<dir> <world> <token> <customers> …]
 *
 * Usually one world a process (`kit world serve` serves one); several share the built twins and
 * the cost of starting (the bench's baseline world rides with the real account's, idle while
 * the other works). With `<customers>` above 0, the world's Stripe twin is given that many
 * customers before it listens, in-process through the runner (`WorldHandle.handle`, POST
 * /v1/customers as the world's token opens the default account, 32 in flight: each one an entry
 * of its own, durable as over HTTP, without the loopback). Prints `world <world> <port> <seed ms>
 * <first customer id|->` for each, then `ready`. Stops on SIGTERM/SIGINT.
 */
import { writeTokenFile } from '../../host/index.js';
import { openLocalWorld } from '../../runtime/runner/index.js';
import type { LocalWorldOptions, WorldHandle, WorldRequest } from '../../runtime/runner/types.js';
import { DEFAULT_HOST, DEFAULT_ORG, serveWorld } from '../../sdk/cli/serve.js';
import { buildGuestRuntime, loadBuiltinTwins } from '../../sdk/twin/node.js';
import { inParallel } from '../host/client.js';
import { customerForm, SEED_IN_FLIGHT } from './seed.js';

interface Spec {
  dir: string;
  world: string;
  token: string;
  customers: number;
}

const args = process.argv.slice(2);
const specs: Spec[] = [];
for (let i = 0; i + 3 < args.length; i += 4) specs.push({ dir: args[i]!, world: args[i + 1]!, token: args[i + 2]!, customers: Number(args[i + 3]) });
if (specs.length === 0 || args.length % 4 !== 0 || specs.some((s) => !Number.isInteger(s.customers) || s.customers < 0)) {
  throw new Error('usage: server.js <dir> <world> <token> <customers> [<dir> <world> <token> <customers> …]');
}

/** One customer made through the world itself, as the world's token used as the API key makes it (the default account). */
async function makeCustomer(handle: WorldHandle, token: string, i: number): Promise<string> {
  const request: WorldRequest = {
    surface: 'vendor',
    method: 'POST',
    path: '/stripe/v1/customers',
    query: '',
    // What the host forwards for `Authorization: Bearer <world token>` (host/core/forward.ts).
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${token}`, 'x-kit-auth': 'authorization' },
    body: new TextEncoder().encode(customerForm(i)),
    scope: 'write',
    requestId: `req_seed_${i}`,
    receivedAt: Date.now(),
  };
  const res = await handle.handle(request);
  const text = typeof res.body === 'string' ? res.body : new TextDecoder().decode(res.body);
  if (res.status !== 200) throw new Error(`seeding customer ${i} answered ${res.status}: ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { id: string }).id;
}

/** Serves one world as `kit world serve <dir> --port 0 --world <world>`; answers its line for the parent and how to stop it. */
async function serve(spec: Spec): Promise<{ line: string; close: () => Promise<void> }> {
  let seedMs = 0;
  let first = '-';
  await writeTokenFile(spec.dir, { url: '', token: spec.token, readToken: `tok_r_${spec.token.slice('tok_'.length)}` });
  const serving = await serveWorld(
    { dir: spec.dir, port: 0, host: DEFAULT_HOST, org: DEFAULT_ORG, world: spec.world },
    {
      loadTwins: loadBuiltinTwins,
      async openWorld(options: LocalWorldOptions): Promise<WorldHandle> {
        const handle = await openLocalWorld({ ...options, guestRuntime: await buildGuestRuntime() });
        if (spec.customers > 0) {
          try {
            const started = performance.now();
            const ids = await inParallel(spec.customers, SEED_IN_FLIGHT, (i) => makeCustomer(handle, spec.token, i));
            seedMs = performance.now() - started;
            first = ids[0] as string;
          } catch (e) {
            await handle.close();
            throw e;
          }
        }
        return handle;
      },
    },
  );
  if (serving.tokens.token !== spec.token) throw new Error('serveWorld did not keep the bench token file');
  return { line: `world ${spec.world} ${serving.server.port} ${seedMs.toFixed(1)} ${first}`, close: () => serving.server.close() };
}

// One after the other: the first builds the twins and the guest runtime, which the others reuse.
const served: { line: string; close: () => Promise<void> }[] = [];
for (const spec of specs) served.push(await serve(spec));
for (const s of served) console.log(s.line);
console.log('ready');

const quit = (): void => {
  void Promise.all(served.map((s) => s.close())).then(() => process.exit(0));
};
process.once('SIGTERM', quit);
process.once('SIGINT', quit);
