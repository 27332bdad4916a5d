import { describe, expect, it } from 'vitest';
import type { Entry } from '../world/types.js';
import { REDACTED, redactEntry, redactorOf } from './secrets.js';

describe('secrets hidden from a reader', () => {
  const redact = redactorOf({ webhook_secret: true, hook: ['config.secret', 'a.b.c'] });

  it('hides a whole value or the fields named, copying rather than changing the record', () => {
    if (redact === undefined) throw new Error('no redactor');
    expect(redact('webhook_secret', 'whsec_x')).toBe(REDACTED);
    const hook = { id: 1, config: { url: 'https://x', secret: 's3' }, a: { b: { c: 1, d: 2 } } };
    expect(redact('hook', hook)).toEqual({ id: 1, config: { url: 'https://x', secret: REDACTED }, a: { b: { c: REDACTED, d: 2 } } });
    expect(hook.config.secret).toBe('s3');
    // Nothing to hide: the same value, no copy. A null field stays null (there is no secret).
    const bare = { id: 2, config: { url: 'https://y', secret: null } };
    expect(redact('hook', bare)).toBe(bare);
    expect(redact('hook', null)).toBeNull();
    expect(redact('customer', { secret: 'not named' })).toEqual({ secret: 'not named' });
    expect(redact('hook', { config: 'not an object' })).toEqual({ config: 'not an object' });
  });

  it('has nothing to do for a twin that names no secrets', () => {
    expect(redactorOf(undefined)).toBeUndefined();
    expect(redactorOf({})).toBeUndefined();
  });

  it("hides an entry's secret writes and every webhook delivery's signing secret", () => {
    const entry: Entry = {
      position: 3,
      occurredAt: '2026-01-01T00:00:00.000Z',
      cause: { kind: 'request', method: 'POST', path: '/v1/webhook_endpoints', requestId: 'req_1' } as Entry['cause'],
      writes: [{ type: 'webhook_secret', id: 'a/we_1', value: 'whsec_1' }, { type: 'customer', id: 'a/cus_1', value: { email: 'x' } }],
      events: [
        { type: 'customer.created', data: { id: 'cus_1' } },
        { type: 'webhook.delivery', data: { url: 'https://app', body: '{}', headers: {}, sign: { scheme: 'stripe', secret: 'whsec_1' } } },
      ],
    };
    const seen = redactEntry(entry, redact);
    expect(JSON.stringify(seen)).not.toContain('whsec_1');
    expect(seen.writes[1]).toBe(entry.writes[1]);
    expect(seen.events?.[1]?.data).toMatchObject({ url: 'https://app', sign: { scheme: 'stripe', secret: REDACTED } });
    expect(JSON.stringify(entry)).toContain('whsec_1');
    // Without a twin's secrets the delivery's is still hidden; an entry with nothing to hide is itself.
    expect(JSON.stringify(redactEntry(entry, undefined).writes)).toContain('whsec_1');
    expect(JSON.stringify(redactEntry(entry, undefined).events)).not.toContain('whsec_1');
    const plain: Entry = { ...entry, writes: [entry.writes[1]!], events: [entry.events![0]!] };
    expect(redactEntry(plain, redact)).toBe(plain);
  });
});
