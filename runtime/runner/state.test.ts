import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../store/index.js';
import type { Entry } from '../world/types.js';
import { Deliverer, type DeliveryResult } from './deliveries.js';
import { hasPendingDeliveries, nextDeliveryMs, removeRunnerState } from './state.js';

/** An entry asking for one webhook delivery per url. */
function entryFor(...urls: string[]): Entry {
  return {
    position: 1,
    occurredAt: '2026-01-01T00:00:00.000Z',
    cause: { kind: 'request', method: 'POST', route: 'notify', path: '/notify', status: 200, requestId: 'r' },
    writes: [],
    events: urls.map((url) => ({ type: 'webhook.delivery', data: { url, headers: {}, body: '{}' } })),
  } as unknown as Entry;
}

describe("a closed world's pending deliveries", () => {
  it('answer when the earliest attempt falls due, for that world only, and null once there are none', async () => {
    const storage = new MemoryStorage();
    expect(nextDeliveryMs(storage, 'w')).toBeNull();
    expect(hasPendingDeliveries(storage, 'w')).toBe(false);

    // Every attempt fails; the retries wait 60 s, then 120 s.
    const results: DeliveryResult[] = [];
    let settled: () => void = () => {};
    const deliverer = new Deliverer({
      storage,
      world: 'w',
      baseDelayMs: 60_000,
      fetch: () => Promise.reject(new Error('connection refused')),
      onResult: (_twin, r) => {
        results.push(r);
        if (results.length === 2) settled();
      },
    });
    const attempted = new Promise<void>((resolve) => (settled = resolve));
    const before = Date.now();
    deliverer.enqueue('notify', entryFor('http://127.0.0.1:9/a', 'http://127.0.0.1:9/b'));
    await attempted;
    deliverer.close();
    const after = Date.now();

    const next = nextDeliveryMs(storage, 'w');
    expect(hasPendingDeliveries(storage, 'w')).toBe(true);
    expect(next).not.toBeNull();
    expect(next!).toBeGreaterThanOrEqual(before + 60_000);
    expect(next!).toBeLessThanOrEqual(after + 60_000);
    // The earliest of the two, as the deliverer scheduled it.
    expect(next).toBe(Math.min(...results.map((r) => Date.parse(r.nextAttemptAt!))));
    // Another world's outbox is not this one's.
    expect(nextDeliveryMs(storage, 'w2')).toBeNull();

    // A delivery queued and never attempted (the world closed first) is due at once: its time is past.
    const queued = new Deliverer({ storage, world: 'w3', fetch: () => new Promise<Response>(() => {}) });
    queued.close();
    queued.enqueue('notify', entryFor('http://127.0.0.1:9/c'));
    expect(nextDeliveryMs(storage, 'w3')).toBeLessThanOrEqual(Date.now());

    removeRunnerState(storage, 'w');
    expect(nextDeliveryMs(storage, 'w')).toBeNull();
    expect(hasPendingDeliveries(storage, 'w')).toBe(false);
  });
});
