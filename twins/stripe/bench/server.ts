/**
 * Servers for the Stripe twin's loopback load test, one per process:
 *   uws    <port>          a bare uWS hello world (the baseline)
 *   stripe <port> <token>  the Stripe twin in a world (runner in this thread, LMDB storage in
 *                          a temporary directory, so a create is answered only once durable)
 *                          behind the single-world server; seeds 20 customers first.
 * Prints `ready <port> <customer id>` once it listens; stops on SIGTERM/SIGINT.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as uWS from 'uWebSockets.js';
import { startSingleWorldServer } from '../../../host/single-world.js';
import { openWorldRunner } from '../../../runtime/runner/index.js';
import { openLmdbStorage } from '../../../runtime/store/index.js';
import { buildGuestRuntime, buildTwin } from '../../../sdk/twin/build.js';

const [mode, portArg, token] = process.argv.slice(2);
const port = Number(portArg ?? '0');
export const BENCH_KEY = 'sk_test_benchKey0000000001';

async function start(): Promise<() => Promise<void>> {
  if (mode === 'uws') {
    const app = uWS.App().any('/*', (res) => {
      res.end('Hello World!');
    });
    const socket = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
      app.listen('127.0.0.1', port, (s) => (s === false ? reject(new Error(`cannot listen on ${port}`)) : resolve(s)));
    });
    console.log(`ready ${uWS.us_socket_local_port(socket)} -`);
    return async () => {
      uWS.us_listen_socket_close(socket);
      app.close();
    };
  }
  if (mode === 'stripe') {
    if (token === undefined) throw new Error('stripe mode needs a token argument');
    const dir = mkdtempSync(join(tmpdir(), 'stripe-bench-'));
    const storage = openLmdbStorage(dir);
    const bundle = await buildTwin('twins/stripe/twin/index.ts');
    const runner = await openWorldRunner({ storage, world: 'bench', twins: [bundle], guestRuntime: await buildGuestRuntime() });
    const server = await startSingleWorldServer({
      world: runner, org: 'local', tokens: { token, readToken: `${token}_read` },
      twins: [{ vendor: 'stripe', requestScopes: [] }], port, budget: false,
    });
    let customer = '';
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${server.worldUrl}/stripe/v1/customers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${BENCH_KEY}`, 'x-twins-key': token, 'content-type': 'application/x-www-form-urlencoded' },
        body: `email=seed${i}%40example.com&name=Seed+${i}&metadata[i]=${i}`,
      });
      const body = (await res.json()) as { id?: string };
      if (res.status !== 200 || body.id === undefined) throw new Error(`seeding failed: ${res.status} ${JSON.stringify(body)}`);
      customer = body.id;
    }
    console.log(`ready ${server.port} ${customer}`);
    return async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    };
  }
  throw new Error(`unknown mode ${mode ?? '(none)'}; use uws or stripe`);
}

const stop = await start();
const quit = (): void => {
  void stop().then(() => process.exit(0));
};
process.once('SIGTERM', quit);
process.once('SIGINT', quit);
