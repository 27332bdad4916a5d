/**
 * Requests as the host hands them to a world, for the in-process benchmarks of this folder:
 * the headers an HTTP client sends through the host (wrk's), and the world's token the host
 * already checked. Plain data: `ab.ts` uses them with another tree's engine.
 */
import type { WorldRequest } from '../../runtime/runner/types.js';

const encoder = new TextEncoder();

function vendorRequest(method: string, path: string, query: string, headers: Record<string, string>): WorldRequest {
  return {
    surface: 'vendor',
    method,
    path,
    query,
    headers: { host: '127.0.0.1:4440', 'user-agent': 'bench', accept: '*/*', 'x-kit-token': 'tok_bench-0123456789abcdefghijklmnopqrstuvwxyzABCDE', ...headers },
    scope: 'write',
    requestId: 'req_bench',
    receivedAt: 0,
  };
}

/** A request to the world's own API (`PUT /clock`, say) with a JSON body. */
export function apiRequest(method: string, path: string, body: unknown): WorldRequest {
  return {
    surface: 'api', method, path, query: '', headers: { 'content-type': 'application/json' }, body: encoder.encode(JSON.stringify(body)),
    scope: 'write', requestId: 'req_bench', receivedAt: 0,
  };
}

/** A hello twin request, with a JSON body when `body` is given. */
export function helloRequest(method: string, path: string, body?: unknown): WorldRequest {
  const req = vendorRequest(method, path, '', {});
  if (body !== undefined) {
    req.headers['content-type'] = 'application/json';
    req.body = encoder.encode(JSON.stringify(body));
  }
  return req;
}

/** A Stripe twin request with a test-mode key, form-encoded when `form` is given. */
export function stripeRequest(method: string, path: string, form?: string, query = ''): WorldRequest {
  const req = vendorRequest(method, path, query, { authorization: 'Bearer sk_test_bench' });
  if (form !== undefined) {
    req.headers['content-type'] = 'application/x-www-form-urlencoded';
    req.body = encoder.encode(form);
  }
  return req;
}
