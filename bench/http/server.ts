/**
 * The servers of the HTTP load test, one per process:
 *   uws  <port>          a bare uWS hello world (the baseline)
 *   uws-async <port>     the same answered after a promise (onAborted, then a corked write):
 *                        the least any asynchronous WorldHandle behind uWS costs
 *   host <port> <token>  the single-world server answering through a trivial WorldHandle
 * Prints `ready <port>` once it listens; stops on SIGTERM/SIGINT.
 */
import * as uWS from 'uWebSockets.js';
import { constantWorld } from '../../host/echo-world.js';
import { startSingleWorldServer } from '../../host/single-world.js';

const [mode, portArg, token] = process.argv.slice(2);
const port = Number(portArg ?? '0');

async function start(): Promise<() => Promise<void>> {
  if (mode === 'uws') {
    const app = uWS.App().any('/*', (res) => {
      res.end('Hello World!');
    });
    const socket = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
      app.listen('127.0.0.1', port, (s) => (s === false ? reject(new Error(`cannot listen on ${port}`)) : resolve(s)));
    });
    console.log(`ready ${uWS.us_socket_local_port(socket)}`);
    return async () => {
      uWS.us_listen_socket_close(socket);
      app.close();
    };
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
    const socket = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
      app.listen('127.0.0.1', port, (s) => (s === false ? reject(new Error(`cannot listen on ${port}`)) : resolve(s)));
    });
    console.log(`ready ${uWS.us_socket_local_port(socket)}`);
    return async () => {
      uWS.us_listen_socket_close(socket);
      app.close();
    };
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
  throw new Error(`unknown mode ${mode ?? '(none)'}; use uws or host`);
}

const stop = await start();
const quit = (): void => {
  void stop().then(() => process.exit(0));
};
process.once('SIGTERM', quit);
process.once('SIGINT', quit);
