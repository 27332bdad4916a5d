/**
 * The node:http hello world of the HTTP load test (row `node-http`): the second baseline, what a
 * server on Node's own HTTP stack costs before it does anything. Answers 'Hello World!' to every
 * request, like the uWS baseline in server.ts.
 *
 *   node dist/bench/http/node-hello.js <port>    # prints `ready <port>`; stops on SIGTERM/SIGINT
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const server = createServer((_req, res) => {
  res.end('Hello World!');
});
server.listen(Number(process.argv[2] ?? '0'), '127.0.0.1', () => {
  console.log(`ready ${(server.address() as AddressInfo).port}`);
});
const quit = (): void => {
  server.close(() => process.exit(0));
  // Keep-alive connections from wrk would hold close() open.
  server.closeAllConnections();
};
process.once('SIGTERM', quit);
process.once('SIGINT', quit);
