/**
 * A loopback server standing in for a vendor, for the tests of the outbound fetches
 * (runtime/roots/node-outbound.ts, host/edge/outbound.ts): an echo, a redirect, bodies over and
 * at a cap, a gzipped answer, a request that never answers, a body that stalls or is cut, each
 * request recorded. And `refusal`, the KitError a call rejects with.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { KitError } from '../../runtime/errors.js';

export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface StandIn {
  readonly port: number;
  /** `http://127.0.0.1:<port><path>`. */
  at(path: string): string;
  /** Every request, in order (a test empties it first). */
  readonly seen: Seen[];
  close(): Promise<void>;
}

type Route = (req: IncomingMessage, res: ServerResponse, body: string) => void;

const ROUTES: Record<string, Route> = {
  '/echo': (req, res, body) => {
    res.setHeader('content-type', 'application/json');
    res.setHeader('set-cookie', ['a=1; Path=/', 'b=2; Expires=Wed, 21 Oct 2037 07:28:00 GMT']);
    res.setHeader('x-many', ['one', 'two']);
    res.end(JSON.stringify({ method: req.method, body }));
  },
  '/redirect': (_req, res) => {
    res.writeHead(302, { location: '/echo' });
    res.end('moved');
  },
  '/big-declared': (_req, res) => {
    res.writeHead(200, { 'content-length': '2000' });
    res.end('x'.repeat(2000));
  },
  '/big-chunked': (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    for (let i = 0; i < 20; i++) res.write('y'.repeat(100));
    res.end();
  },
  '/exactly-1000': (_req, res) => res.end('z'.repeat(1000)),
  '/gzip': (_req, res) => {
    const packed = gzipSync(JSON.stringify({ packed: true }));
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(packed.byteLength) });
    res.end(packed);
  },
  '/hang': () => {
    // Never answers.
  },
  '/stall-body': (_req, res) => {
    res.writeHead(200, { 'content-length': '100' });
    res.write('half');
  },
  '/cut-body': (req, res) => {
    res.writeHead(200, { 'content-length': '100' });
    res.write('half', () => req.socket.destroy());
  },
};

export async function startStandInVendor(): Promise<StandIn> {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const route = ROUTES[(req.url ?? '').split('?')[0] as string];
      if (route === undefined) {
        res.writeHead(404);
        res.end();
      } else route(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    at: (path) => `http://127.0.0.1:${port}${path}`,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The KitError a call rejects with (fails the test if it answers). */
export async function refusal(call: Promise<unknown>): Promise<KitError> {
  try {
    await call;
  } catch (e) {
    if (e instanceof KitError) return e;
    throw e;
  }
  throw new Error('the call answered; a refusal was expected');
}
