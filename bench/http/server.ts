/**
 * The servers of the HTTP load test, one per process:
 *   uws  <port>          a bare uWS hello world (the baseline)
 *   uws-async <port>     the same answered after a promise (onAborted, then a corked write):
 *                        the least any asynchronous WorldHandle behind uWS costs
 *   host <port> <token>  the single-world server answering through a trivial WorldHandle
 *   world <port> <token> <dir>
 *                        a world served exactly as `kit world serve <dir> --port 0 --world bench`
 *                        serves it by default: through the CLI's `serveWorld` (every built-in
 *                        twin, its CA and proxy, no request budget, the world in the server's
 *                        thread), state in LMDB under <dir>. The token file is written first
 *                        with <token> (serveWorld keeps an existing one), and the world is seeded
 *                        before it listens: one hello greeting, twenty Stripe customers; with
 *                        BENCH_WORLD=lived-in, then rounds of payments, subscriptions and checkout
 *                        (printed: `lived-in <intent id>`). WORLD_THREAD=worker opens the world
 *                        in a worker thread of its own, as `kit world serve` did before issue 30.
 * Prints `ready <port> [greeting id] [customer id]` once it listens; stops on SIGTERM/SIGINT.
 *
 * The `world` mode needs the compiled tree (`make build`; run as dist/bench/http/server.js):
 * with WORLD_THREAD=worker the world's worker thread runs dist/runtime/runner/worker-main.js.
 */
import * as uWS from 'uWebSockets.js';
import { constantWorld } from '../../host/echo-world.js';
import { startSingleWorldServer } from '../../host/single-world.js';
import { writeTokenFile } from '../../host/index.js';
import { openLocalWorld } from '../../runtime/runner/index.js';
import type { LocalWorldOptions, WorldHandle, WorldRequest } from '../../runtime/runner/types.js';
import { DEFAULT_HOST, DEFAULT_ORG, serveWorld } from '../../sdk/cli/serve.js';
import { buildGuestRuntime, loadBuiltinTwins } from '../../sdk/twin/node.js';

const [mode, portArg, token, dir] = process.argv.slice(2);
const port = Number(portArg ?? '0');

/** Listens with a baseline uWS app, prints `ready <port>`, and answers how to stop it. */
async function serveBaseline(app: uWS.TemplatedApp): Promise<() => Promise<void>> {
  const socket = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
    app.listen('127.0.0.1', port, (s) => (s === false ? reject(new Error(`cannot listen on ${port}`)) : resolve(s)));
  });
  console.log(`ready ${uWS.us_socket_local_port(socket)}`);
  return async () => {
    uWS.us_listen_socket_close(socket);
    app.close();
  };
}

async function start(): Promise<() => Promise<void>> {
  if (mode === 'uws') {
    const app = uWS.App().any('/*', (res) => {
      res.end('Hello World!');
    });
    return serveBaseline(app);
  }
  if (mode === 'uws-async') {
    const app = uWS.App().any('/*', (res) => {
      let aborted = false;
      res.onAborted(() => {
        aborted = true;
      });
      void Promise.resolve('Hello World!').then((body) => {
        if (!aborted) res.cork(() => res.end(body));
      });
    });
    return serveBaseline(app);
  }
  if (mode === 'host') {
    if (token === undefined) throw new Error('host mode needs a token argument');
    const server = await startSingleWorldServer({
      world: constantWorld('Hello World!'),
      org: 'local',
      worldName: 'bench',
      tokens: { token, readToken: `${token}_read` },
      twins: [{ vendor: 'hello', requestScopes: [] }],
      port,
      // The load would spend any realistic budget; the budget's own cost is one call either way.
      budget: { size: 1e12, windowMs: 1000 },
    });
    console.log(`ready ${server.port}`);
    return () => server.close();
  }
  if (mode === 'world') {
    if (token === undefined || dir === undefined) throw new Error('world mode needs a token and a directory');
    // The bench's known token (wrk sends it): a token file of the CLI's format, which
    // serveWorld keeps (it mints tokens only when there is none).
    await writeTokenFile(dir, { url: '', token, readToken: `tok_r_${token.slice('tok_'.length)}` });
    const worker = process.env['WORLD_THREAD'] === 'worker';
    let greeting = '-';
    let customer = '-';
    // As sdk/cli/kit.ts wires `kit world serve`, plus the seeding: the handle is seeded before
    // serveWorld puts it on the server, so every row starts from the same world.
    const serving = await serveWorld(
      { dir, port: 0, host: DEFAULT_HOST, org: DEFAULT_ORG, world: 'bench' },
      {
        loadTwins: loadBuiltinTwins,
        async openWorld(options: LocalWorldOptions): Promise<WorldHandle> {
          const world = await openLocalWorld({ ...options, guestRuntime: await buildGuestRuntime(), ...(worker ? { thread: 'worker' as const } : {}) });
          try {
            greeting = await seed(world, '/hello/v1/greetings', 'application/json', JSON.stringify({ name: 'Ada' }));
            if (options.twins.some((t) => t.vendor === 'stripe')) {
              // Twenty customers, so that a list of ten is a full page with more behind it.
              customer = await seed(world, '/stripe/v1/customers', 'application/x-www-form-urlencoded', 'email=ada%40example.com&name=Ada');
              for (let i = 1; i < 20; i++) await seed(world, '/stripe/v1/customers', 'application/x-www-form-urlencoded', `email=seed${i}%40example.com&name=Seed+${i}`);
              if (process.env['BENCH_WORLD'] === 'lived-in') console.log(`lived-in ${await liveIn(world)}`);
            }
          } catch (e) {
            await world.close();
            throw e;
          }
          return world;
        },
      },
    );
    if (serving.tokens.token !== token) throw new Error('serveWorld did not keep the bench token file');
    console.log(`ready ${serving.server.port} ${greeting} ${customer}`);
    return () => serving.server.close();
  }
  throw new Error(`unknown mode ${mode ?? '(none)'}; use uws, uws-async, host or world`);
}

/**
 * A few rounds of what an app using Stripe does besides making customers (catalogue,
 * payments, refunds, subscriptions, checkout): the world then holds the variety of object
 * shapes a real test run leaves, not only customers. Answers the last payment intent's id.
 */
async function liveIn(world: WorldHandle): Promise<string> {
  const form = 'application/x-www-form-urlencoded';
  let intent = '';
  for (let round = 0; round < 3; round++) {
    const customer = await seed(world, '/stripe/v1/customers', form, `email=round${round}%40example.com&name=R&metadata[order]=${round}&address[line1]=1+Main&address[city]=X&address[country]=US`);
    const product = await seed(world, '/stripe/v1/products', form, `name=Plan+${round}`);
    const price = await seed(world, '/stripe/v1/prices', form, `product=${product}&unit_amount=1000&currency=usd&recurring[interval]=month`);
    const method = await seed(world, '/stripe/v1/payment_methods/pm_card_visa/attach', form, `customer=${customer}`);
    await seed(world, `/stripe/v1/customers/${customer}`, form, `invoice_settings[default_payment_method]=${method}`);
    intent = await seed(world, '/stripe/v1/payment_intents', form, `amount=2000&currency=usd&customer=${customer}&payment_method=${method}&confirm=true&automatic_payment_methods[enabled]=true&automatic_payment_methods[allow_redirects]=never`);
    await seed(world, '/stripe/v1/refunds', form, `payment_intent=${intent}&amount=500`);
    await seed(world, '/stripe/v1/subscriptions', form, `customer=${customer}&items[0][price]=${price}`);
    await seed(world, '/stripe/v1/coupons', form, 'percent_off=10&duration=once');
    await seed(world, '/stripe/v1/checkout/sessions', form, 'mode=payment&line_items[0][price_data][currency]=usd&line_items[0][price_data][unit_amount]=500&line_items[0][price_data][product_data][name]=T&line_items[0][quantity]=1&success_url=https%3A%2F%2Fexample.com%2Fs');
  }
  return intent;
}

/** Makes one resource through the world itself and answers its id. */
async function seed(world: WorldHandle, path: string, type: string, body: string): Promise<string> {
  const request: WorldRequest = {
    surface: 'vendor',
    method: 'POST',
    path,
    query: '',
    headers: { 'content-type': type, authorization: 'Bearer sk_test_bench' },
    body: new TextEncoder().encode(body),
    scope: 'write',
    requestId: 'req_seed',
    receivedAt: Date.now(),
  };
  const res = await world.handle(request);
  const text = typeof res.body === 'string' ? res.body : new TextDecoder().decode(res.body);
  if (res.status !== 200) throw new Error(`seeding ${path} answered ${res.status}: ${text}`);
  return (JSON.parse(text) as { id: string }).id;
}

const stop = await start();
const quit = (): void => {
  void stop().then(() => process.exit(0));
};
process.once('SIGTERM', quit);
process.once('SIGINT', quit);
