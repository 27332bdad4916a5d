/**
 * Worlds for the stream tests, built from the twins they need only (not every built-in:
 * a twin mid-work elsewhere must not fail these tests, and building fewer is faster).
 */
import { fileURLToPath } from 'node:url';
import { MemoryStorage } from '../../runtime/store/index.js';
import { openWorldRunner, type WorldRunner } from '../../runtime/runner/index.js';
import type { TwinBundle, WorldRequest } from '../../runtime/runner/types.js';
import { buildGuestRuntime, buildTwin } from '../../sdk/twin/build.js';

export const FROZEN_NOW = Date.parse('2026-01-01T00:00:00.000Z');
const built = new Map<string, Promise<TwinBundle>>();

/** A twin by its entry, relative to the repository root (`twins/smtp/twin/index.ts`), built once per process. */
export function twinBundle(entry: string): Promise<TwinBundle> {
  let b = built.get(entry);
  if (!b) built.set(entry, (b = buildTwin(fileURLToPath(new URL(`../../${entry}`, import.meta.url)))));
  return b;
}

export const SMTP = 'twins/smtp/twin/index.ts';
export const HELLO = 'twins/hello/twin/index.ts';
export const ECHO = 'test/streams/fixtures/echo/index.ts';

export interface StreamTestWorld {
  runner: WorldRunner;
  vendor(method: string, path: string): Promise<{ status: number; text: string; json: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience
  api(method: string, path: string): Promise<{ status: number; text: string; json: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience
  close(): Promise<void>;
}

let counter = 0;

/** An in-process world on memory storage with the wall clock frozen. */
export async function openStreamWorld(entries: string[], world = 'streams'): Promise<StreamTestWorld> {
  const twins = await Promise.all(entries.map(twinBundle));
  const runner = await openWorldRunner({ storage: new MemoryStorage(), world, twins, now: () => FROZEN_NOW, guestRuntime: await buildGuestRuntime() });
  const send = async (surface: 'api' | 'vendor', method: string, pathAndQuery: string) => {
    const q = pathAndQuery.indexOf('?');
    const request: WorldRequest = {
      surface,
      method,
      path: q < 0 ? pathAndQuery : pathAndQuery.slice(0, q),
      query: q < 0 ? '' : pathAndQuery.slice(q + 1),
      headers: {},
      scope: 'write',
      requestId: `req_stream${++counter}`,
      receivedAt: FROZEN_NOW,
    };
    const res = await runner.handle(request);
    const text = typeof res.body === 'string' ? res.body : Buffer.from(res.body).toString('latin1');
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(typeof res.body === 'string' ? res.body : Buffer.from(res.body).toString('utf8'));
    } catch {
      json = undefined;
    }
    return { status: res.status, text, json };
  };
  return {
    runner,
    vendor: (method, path) => send('vendor', method, path),
    api: (method, path) => send('api', method, path),
    close: () => runner.close(),
  };
}
