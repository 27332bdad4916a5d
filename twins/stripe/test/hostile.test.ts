/**
 * Hostile and malformed input over the real wire: every answer is a clear 4xx in Stripe's
 * shape (or the host's, for a body it cannot parse), never a 500, and the twin keeps working.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStripeTwin, type StripeTwin } from './harness.js';

let twin: StripeTwin;
const auth = { authorization: 'Bearer sk_test_hostileAccount00001' };
const form = { ...auth, 'content-type': 'application/x-www-form-urlencoded' };

beforeAll(async () => {
  twin = await startStripeTwin();
});
afterAll(async () => {
  await twin.close();
});

describe('hostile input', () => {
  const cases: [string, string, string, Record<string, string>, string | undefined, number][] = [
    ['metadata as an array', 'POST', '/v1/customers', { ...auth, 'content-type': 'application/json' }, '{"metadata":[1,2]}', 400],
    ['a string param sent as an object', 'POST', '/v1/customers', form, 'email[x]=a', 400],
    ['a name given a value and children', 'POST', '/v1/customers', form, 'metadata[a]=1&metadata=2', 400],
    ['a float amount', 'POST', '/v1/payment_intents', form, 'amount=10.5&currency=usd', 400],
    ['a huge amount', 'POST', '/v1/payment_intents', form, 'amount=99999999999999999999&currency=usd', 400],
    ['a negative limit', 'GET', '/v1/customers?limit=-1', auth, undefined, 400],
    ['a created range that is not a number', 'GET', '/v1/customers?created[gte]=abc', auth, undefined, 400],
    ['expand five levels deep', 'GET', '/v1/payment_intents?expand[]=data.a.b.c.d.e', auth, undefined, 400],
    ['a metadata value over 500 characters', 'POST', '/v1/customers', form, `metadata[k]=${'v'.repeat(501)}`, 400],
    ['51 metadata keys', 'POST', '/v1/customers', form, Array.from({ length: 51 }, (_, i) => `metadata[k${i}]=v`).join('&'), 400],
    ['a prototype key', 'POST', '/v1/customers', form, '__proto__[polluted]=1', 400],
    ['a constructor key in metadata', 'POST', '/v1/customers', form, 'metadata[constructor][x]=1', 400],
    ['a search query of garbage', 'GET', `/v1/customers/search?query=${encodeURIComponent(')('.repeat(3000))}`, auth, undefined, 400],
    ['an id of odd characters', 'GET', `/v1/customers/${encodeURIComponent('cus_../../\u0000é')}`, auth, undefined, 404],
    ['a JSON body that is not an object', 'POST', '/v1/customers', { ...auth, 'content-type': 'application/json' }, '[1,2,3]', 400],
    ['an enum value Stripe does not have', 'POST', '/v1/customers', form, 'tax_exempt=sometimes', 400],
    ['a boolean that is not one', 'GET', '/v1/products?active=maybe', auth, undefined, 400],
    ['an expand of the prototype', 'GET', '/v1/customers?expand[]=__proto__', auth, undefined, 400],
    ['a range operator Stripe does not have', 'GET', '/v1/customers?created[foo]=1', auth, undefined, 400],
  ];

  for (const [name, method, path, headers, body, status] of cases) {
    it(`answers ${status} for ${name}`, async () => {
      const res = await twin.raw(method, path, body === undefined ? { headers } : { headers, body });
      expect(res.status).toBe(status);
      const error = (res.body as { error?: { message?: unknown } }).error;
      expect(typeof error?.message).toBe('string');
    });
  }

  it('takes an array only in bracket syntax, as Stripe does: a lone value is 400 Invalid array', async () => {
    const lone = await twin.raw('GET', '/v1/customers?expand=data.default_source', { headers: auth });
    expect(lone.status).toBe(400);
    expect(lone.body).toEqual({ error: { message: 'Invalid array', param: 'expand', type: 'invalid_request_error' } });
    const types = await twin.raw('POST', '/v1/webhook_endpoints', { headers: form, body: 'url=https%3A%2F%2Fexample.com%2Fhook&enabled_events=*' });
    expect(types.status).toBe(400);
    expect((types.body as { error: { param: string } }).error.param).toBe('enabled_events');
    // `expand[]=` (curl's spelling) and `expand[0]=` (the SDKs') both work, with one element too.
    for (const q of ['expand[]=data.default_source', 'expand[0]=data.default_source', 'expand[0]=data.default_source&expand[1]=data.test_clock']) {
      expect((await twin.raw('GET', `/v1/customers?${q}`, { headers: auth })).status).toBe(200);
    }
  });

  it('matches event types by wildcard in one pass: a pattern of many stars is no slower than one', async () => {
    const made = await twin.raw('POST', '/v1/customers', { headers: form, body: 'email=w%40example.com' });
    expect(made.status).toBe(200);
    const types = async (type: string): Promise<string[]> => {
      const res = await twin.raw('GET', `/v1/events?type=${encodeURIComponent(type)}`, { headers: auth });
      expect(res.status).toBe(200);
      return (res.body as { data: { type: string }[] }).data.map((e) => e.type);
    };
    expect(await types('customer.*')).toContain('customer.created');
    expect(await types('*.created')).toContain('customer.created');
    expect(await types('c*r.cr*d')).toContain('customer.created');
    expect(await types('customer.created*x')).toEqual([]);
    expect(await types('customer')).toEqual([]);
    // As a regular expression of `.*`s, 14 stars and a z took 4.5 s over 10 events; 40 would not end.
    expect(await types(`${'*'.repeat(40)}z`)).toEqual([]);
    expect((await twin.raw('DELETE', `/v1/customers/${(made.body as { id: string }).id}`, { headers: auth })).status).toBe(200);
  });

  it('refuses an idempotency key over 255 characters', async () => {
    const res = await twin.raw('POST', '/v1/customers', { headers: { ...form, 'idempotency-key': 'k'.repeat(300) }, body: 'name=x' });
    expect(res.status).toBe(400);
  });

  it('keeps text exactly, and still works after all of the above', async () => {
    const name = 'Zoë 🎉 "quoted" & <tags>';
    const res = await twin.raw('POST', '/v1/customers', { headers: form, body: `name=${encodeURIComponent(name)}&metadata[${encodeURIComponent('ключ')}]=${encodeURIComponent('значение')}` });
    expect(res.status).toBe(200);
    const created = res.body as { id: string; name: string; metadata: Record<string, string> };
    expect(created.name).toBe(name);
    expect(created.metadata).toEqual({ ключ: 'значение' });
    const list = await twin.raw('GET', '/v1/customers?limit=100', { headers: auth });
    // None of the refused requests above left an object behind.
    expect((list.body as { data: unknown[] }).data).toHaveLength(1);
  });
});
