/**
 * A `WorldHandle` that answers each request with what it received, for testing and
 * benchmarking a host without a runner. Request headers steer it:
 * `x-echo-status` (the status), `x-echo-delay` (ms, answered as `delayMs`),
 * `x-echo-fault: reset`, `x-echo-throw: kit | plain` (handle rejects),
 * `x-echo-gate: <name>` (the answer waits until `release(name)`),
 * `x-echo-set-header: <name>: <value>` (one more header on the answer).
 */
import { createHash } from 'node:crypto';
import { KitError } from '../runtime/errors.js';
import type { WorldHandle, WorldRequest, WorldResponse } from '../runtime/runner/types.js';

export interface EchoBody {
  surface: WorldRequest['surface'];
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  scope: WorldRequest['scope'];
  requestId: string;
  bodyLength: number;
  /** SHA-256 of the body, hex; '' when there is none. */
  bodySha256: string;
}

export interface EchoWorld extends WorldHandle {
  /** Every request handed to `handle`, in order. */
  readonly received: WorldRequest[];
  /** Whether `close()` ran, and how many requests were unanswered when it did. */
  readonly closed: { at: number | null; inFlightAtClose: number };
  /** Lets the requests waiting on gate `name` answer. */
  release(name: string): void;
}

export function echoWorld(name = 'echo', code = 'echo-1'): EchoWorld {
  const received: WorldRequest[] = [];
  const closed = { at: null as number | null, inFlightAtClose: 0 };
  let inFlight = 0;
  const gates = new Map<string, { wait: Promise<void>; open: () => void }>();
  const gate = (name: string) => {
    let g = gates.get(name);
    if (g === undefined) {
      let open = (): void => {};
      const wait = new Promise<void>((resolve) => {
        open = resolve;
      });
      g = { wait, open };
      gates.set(name, g);
    }
    return g;
  };
  return {
    name,
    code,
    received,
    closed,
    async handle(request: WorldRequest): Promise<WorldResponse> {
      received.push(request);
      inFlight++;
      try {
        const h = request.headers;
        const gateName = h['x-echo-gate'];
        if (gateName !== undefined) await gate(gateName).wait;
        if (h['x-echo-throw'] === 'kit') throw new KitError('clock_backward', 'the echo world was asked to fail');
        if (h['x-echo-throw'] === 'plain') throw new Error('echo world internal failure');
        const body = request.body;
        const echo: EchoBody = {
          surface: request.surface,
          method: request.method,
          path: request.path,
          query: request.query,
          headers: { ...h },
          scope: request.scope,
          requestId: request.requestId,
          bodyLength: body?.byteLength ?? 0,
          bodySha256: body === undefined ? '' : createHash('sha256').update(body).digest('hex'),
        };
        const response: WorldResponse = {
          status: h['x-echo-status'] !== undefined ? Number(h['x-echo-status']) : 200,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(echo),
        };
        const extra = h['x-echo-set-header'];
        const colon = extra?.indexOf(':') ?? -1;
        if (extra !== undefined && colon > 0) response.headers[extra.slice(0, colon).trim().toLowerCase()] = extra.slice(colon + 1).trim();
        if (h['x-echo-delay'] !== undefined) response.delayMs = Number(h['x-echo-delay']);
        if (h['x-echo-fault'] === 'reset') response.fault = 'reset';
        return response;
      } finally {
        inFlight--;
      }
    },
    release(name: string): void {
      gate(name).open();
    },
    async close(): Promise<void> {
      closed.at = Date.now();
      closed.inFlightAtClose = inFlight;
    },
  };
}

/** The cheapest world there is: one fixed answer (the benchmark's "trivial WorldHandle"). */
export function constantWorld(body = 'Hello World!', code = 'bench-1'): WorldHandle {
  const response: WorldResponse = { status: 200, headers: { 'content-type': 'text/plain' }, body };
  return { name: 'bench', code, handle: () => Promise.resolve(response), close: () => Promise.resolve() };
}
