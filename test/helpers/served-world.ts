/**
 * A world behind the real single-world server, for conformance suites that drive a twin
 * with its vendor's official SDK: the server, an in-process client for the world API, and
 * the world clock set and frozen at `start` for determinism.
 */
import { startSingleWorldServer, type SingleWorldServer } from '../../host/single-world.js';
import type { WorldHandle, WorldRequest } from '../../runtime/runner/types.js';

export interface ServedWorld {
  server: SingleWorldServer;
  /** A world API call made in-process: `api('POST', '/clock/advance', { by: '1h' })`. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }>;
}

export async function serveWorld(
  world: WorldHandle,
  options: { vendor: string; requestScopes: 'read'[]; tokens: { token: string; readToken: string }; start: number },
): Promise<ServedWorld> {
  const server = await startSingleWorldServer({
    world, org: 'local', tokens: options.tokens, twins: [{ vendor: options.vendor, requestScopes: options.requestScopes }], budget: false,
  });
  let counter = 0;
  const api: ServedWorld['api'] = async (method, path, body) => {
    const q = path.indexOf('?');
    const request: WorldRequest = {
      surface: 'api', method, path: q < 0 ? path : path.slice(0, q), query: q < 0 ? '' : path.slice(q + 1), headers: { 'content-type': 'application/json' }, scope: 'write',
      requestId: `req_harness${++counter}`, receivedAt: options.start,
    };
    if (body !== undefined) request.body = new TextEncoder().encode(JSON.stringify(body));
    const res = await world.handle(request);
    const text = typeof res.body === 'string' ? res.body : new TextDecoder().decode(res.body);
    return { status: res.status, json: text === '' ? undefined : JSON.parse(text) };
  };
  const set = await api('PUT', '/clock', { at: new Date(options.start).toISOString() });
  if (set.status !== 200) throw new Error(`setting the world clock failed: ${JSON.stringify(set.json)}`);
  return { server, api };
}
