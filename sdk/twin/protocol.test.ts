import { describe, expect, it } from 'vitest';
import { readGuestOutput } from './protocol.js';

describe('readGuestOutput', () => {
  it('accepts what the guest runtime answers', () => {
    const text = JSON.stringify({
      response: { status: 201, headers: { 'x-a': 'b' }, body: { id: 1 } },
      writes: [{ type: 'thing', id: 'a', value: { n: 1 } }, { type: 'thing', id: 'b', value: null }],
      events: [{ type: 'thing.made', data: { n: 1 } }],
    });
    expect(readGuestOutput(text)).toEqual({ ok: JSON.parse(text) });
    expect(readGuestOutput('{"response":{"status":500,"body":"x"},"writes":[],"events":[],"thrown":{"message":"m","stack":"s"}}')).toEqual({
      ok: { response: { status: 500, body: 'x' }, writes: [], events: [], thrown: { message: 'm', stack: 's' } },
    });
  });

  it('takes a JSON body that follows the answer: parsed, or kept as text for a host that sends it on', () => {
    const text = '{"response":{"status":200,"bodyFollows":true},"writes":[{"type":"t","id":"a","value":1}],"events":[]}\n{"id":"x","list":[1,2]}';
    expect(readGuestOutput(text)).toEqual({ ok: { response: { status: 200, body: { id: 'x', list: [1, 2] } }, writes: [{ type: 't', id: 'a', value: 1 }], events: [] } });
    expect(readGuestOutput(text, { rawBody: true })).toEqual({
      ok: { response: { status: 200, bodyJson: '{"id":"x","list":[1,2]}' }, writes: [{ type: 't', id: 'a', value: 1 }], events: [] },
    });
  });

  it('refuses any other shape, naming what is wrong', () => {
    const cases: [unknown, RegExp][] = [
      [42, /no string/],
      ['nope', /not JSON/],
      ['[]', /no object/],
      ['{"writes":[],"events":[],"response":{"status":42}}', /status/],
      ['{"writes":[],"events":[],"response":{"headers":{"a":1}}}', /headers/],
      ['{"writes":[],"events":[],"response":{"bodyBase64":7}}', /bodyBase64/],
      ['{"writes":{},"events":[]}', /writes is not an array/],
      ['{"writes":[{"type":"","id":"a","value":1}],"events":[]}', /writes\[0\]/],
      ['{"writes":[{"type":"t","id":"a"}],"events":[]}', /writes\[0\]/],
      ['{"writes":[],"events":[{"data":1}]}', /events\[0\]/],
      ['{"writes":[]}', /events is not an array/],
      ['{"writes":[],"events":[],"thrown":{"message":1}}', /thrown/],
      ['{"writes":[],"events":[],"response":{"bodyFollows":true}}', /no body follows/],
      ['{"writes":[],"events":[],"response":{"bodyFollows":true}}\n{nope', /body that follows the answer is not JSON/],
      ['{"writes":[],"events":[],"response":{"status":200}}\n{"a":1}', /text after its JSON/],
      ['{"writes":[],"events":[]}\n{"a":1}', /text after its JSON/],
    ];
    for (const [text, error] of cases) {
      const r = readGuestOutput(text);
      expect('error' in r ? r.error : 'accepted', String(text)).toMatch(error);
    }
  });
});
