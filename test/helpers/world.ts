/**
 * An in-process world for tests: the real runner, engine and sandbox on in-memory
 * storage, with the wall clock frozen, and a small client that speaks `WorldRequest`.
 */
import { fileURLToPath } from 'node:url';
import { MemoryStorage, type Storage } from '../../runtime/store/index.js';
import { openWorldRunner, type WorldRunner, type WorldRunnerOptions } from '../../runtime/runner/index.js';
import type { WorldRequest, WorldResponse } from '../../runtime/runner/types.js';
import { buildGuestRuntime, buildTwin, loadBuiltinTwins } from '../../sdk/twin/build.js';
import type { TwinBundle } from '../../runtime/runner/types.js';

export const FROZEN_NOW = Date.parse('2026-01-01T00:00:00.000Z');

export interface TestWorld {
  runner: WorldRunner;
  storage: Storage;
  /** A vendor-wire call: `call('POST', '/hello/v1/greetings', { name: 'x' })`. */
  vendor(method: string, path: string, body?: unknown, headers?: Record<string, string>, scope?: 'read' | 'write'): Promise<TestResponse>;
  /** A world API call: `api('PUT', '/clock', { at })`. */
  api(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface TestResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience
  raw: WorldResponse;
}


function encode(body: unknown, headers: Record<string, string>): Uint8Array | undefined {
  if (body === undefined) return undefined;
  if (body instanceof Uint8Array) return body;
  if (typeof body === 'string') return new TextEncoder().encode(body);
  headers['content-type'] ??= 'application/json';
  return new TextEncoder().encode(JSON.stringify(body));
}

function split(pathAndQuery: string): { path: string; query: string } {
  const q = pathAndQuery.indexOf('?');
  return q === -1 ? { path: pathAndQuery, query: '' } : { path: pathAndQuery.slice(0, q), query: pathAndQuery.slice(q + 1) };
}

function read(raw: WorldResponse): TestResponse {
  const text = typeof raw.body === 'string' ? raw.body : new TextDecoder().decode(raw.body);
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: raw.status, headers: raw.headers, text, json, raw };
}

const fixtures = new Map<string, Promise<TwinBundle>>();

/** A twin of test/helpers/twins/ (`notify`), built once per process. */
export function fixtureTwin(name: string): Promise<TwinBundle> {
  let built = fixtures.get(name);
  if (built === undefined) fixtures.set(name, (built = buildTwin(fileURLToPath(new URL(`./twins/${name}/index.ts`, import.meta.url)))));
  return built;
}

/** A fresh world serving the built-in twins named (all when omitted), and `more` beside them. */
export async function openTestWorld(
  options: { vendors?: string[]; world?: string; storage?: Storage; more?: TwinBundle[] } & Partial<Omit<WorldRunnerOptions, 'storage' | 'world' | 'twins'>> = {},
): Promise<TestWorld> {
  const builtins = await loadBuiltinTwins();
  const twins = [...[...builtins.values()].filter((t) => !options.vendors || options.vendors.includes(t.vendor)), ...(options.more ?? [])];
  const storage = options.storage ?? new MemoryStorage();
  const runner = await openWorldRunner({
    now: () => FROZEN_NOW,
    guestRuntime: await buildGuestRuntime(),
    ...options,
    storage,
    world: options.world ?? 'test',
    twins,
  });
  // Numbered per world, so that two worlds given the same requests see the same request ids.
  let counter = 0;
  const send = async (surface: 'api' | 'vendor', method: string, pathAndQuery: string, body: unknown, headers: Record<string, string> = {}, scope: 'read' | 'write' = 'write') => {
    const h = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    const encoded = encode(body, h);
    const request: WorldRequest = { surface, method, ...split(pathAndQuery), headers: h, scope, requestId: `req_test${++counter}`, receivedAt: FROZEN_NOW };
    if (encoded) request.body = encoded;
    return read(await runner.handle(request));
  };
  return {
    runner,
    storage,
    vendor: (method, path, body, headers, scope) => send('vendor', method, path, body, headers, scope),
    api: (method, path, body, headers) => send('api', method, path, body, headers),
    close: () => runner.close(),
  };
}
