/**
 * The Stripe twin behind a real socket, for the official `stripe` package to talk to.
 *
 * Today this serves the built twin through the SDK's guest harness (`node:vm`, in-memory
 * tree) behind a small `node:http` server, with the world clock frozen. When the world runner
 * lands, only `startStripeTwin` changes (to `openLocalWorld` + `startSingleWorldServer`).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { buildTwin, type BuiltTwin } from '../../sdk/twin/build.js';
import { createGuestHarness, type GuestHarness } from '../../sdk/twin/testing.js';

export const TWIN_ENTRY = 'twins/stripe/twin/index.ts';
/** A frozen world clock: 2026-01-01T00:00:00Z. */
export const START = Date.parse('2026-01-01T00:00:00.000Z');
export const TEST_KEY = 'sk_test_twinkitConformance0001';

let built: Promise<BuiltTwin> | undefined;
export function stripeBundle(): Promise<BuiltTwin> {
  built ??= buildTwin(TWIN_ENTRY);
  return built;
}

export interface StripeTwin {
  stripe: Stripe;
  /** A client with another key (another account). */
  client(key: string): Stripe;
  port: number;
  /** Moves the frozen world clock forward. */
  advance(ms: number): void;
  nowMs(): number;
  /** The twin as the harness sees it (log, records), for assertions about entries. */
  harness: GuestHarness;
  /** A raw HTTP request to the twin, for what the SDK cannot send (a missing key). */
  raw(method: string, path: string, init?: { headers?: Record<string, string>; body?: string }): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: unknown }>;
  close(): Promise<void>;
}

export async function startStripeTwin(): Promise<StripeTwin> {
  const bundle = await stripeBundle();
  const harness = createGuestHarness(bundle.source, { now: START, world: 'stripe-conformance' });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const contentType = headers['content-type'];
      delete headers['content-type'];
      let out;
      try {
        out = harness.request(req.method ?? 'GET', req.url ?? '/', text === '' ? { headers } : { headers, body: text, contentType: contentType ?? 'application/x-www-form-urlencoded' });
      } catch (e) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'api_error', message: String(e) } }));
        return;
      }
      const body = typeof out.body === 'string' ? out.body : JSON.stringify(out.body ?? null);
      res.writeHead(out.status, { 'content-type': 'application/json', ...out.headers });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const client = (key: string): Stripe => new Stripe(key, { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0, telemetry: false });
  return {
    stripe: client(TEST_KEY),
    client,
    port,
    harness,
    advance: (ms) => harness.advance(ms),
    nowMs: () => harness.nowMs(),
    raw: (method, path, init = {}) => new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method, path, headers: init.headers ?? {} }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try { body = JSON.parse(text); } catch { /* not JSON */ }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
      });
      req.on('error', reject);
      if (init.body !== undefined) req.write(init.body);
      req.end();
    }),
    close: () => new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((e) => (e ? reject(e) : resolve()));
    }),
  };
}
