import { describe, expect, it } from 'vitest';
import type { CallResult, GuestEngine } from '../sandbox/index.js';
import { invokeGuest } from './twins.js';

/** An engine sharing the host's heap whose one call answers `result`. */
function answering(result: CallResult): GuestEngine {
  return {
    alive: true,
    load: () => ({ ok: '' }),
    call: () => result,
    callValue: () => result,
    unload: () => undefined,
    dispose: () => undefined,
  };
}

const invoke = (result: CallResult, rawBody = true) =>
  invokeGuest(answering(result), 'twin', { kind: 'route' }, () => 'null', { rawBody, hostValue: () => null });

describe('invokeGuest: a response that crosses as a value', () => {
  it('takes the response and its JSON body beside the text, as text for a host that sends it on or parsed', () => {
    const result: CallResult = { ok: '{"writes":[],"events":[]}', writes: [], events: [], response: { status: 201, headers: { 'x-a': 'b' }, bodyFollows: true }, body: '{"id":"x"}' };
    expect(invoke(result).response).toEqual({ status: 201, headers: { 'x-a': 'b' }, bodyJson: '{"id":"x"}' });
    expect(invoke(result, false).response).toEqual({ status: 201, headers: { 'x-a': 'b' }, body: { id: 'x' } });
    expect(invoke({ ...result, response: { status: 204 }, body: undefined }).response).toEqual({ status: 204 });
  });

  it("refuses a malformed one as the handler's error, naming what is wrong", () => {
    const base = { ok: '{"writes":[],"events":[]}', writes: [], events: [] };
    const cases: [CallResult, RegExp][] = [
      [{ ...base, response: 'nope' }, /response is not an object/],
      [{ ...base, response: { status: 99 } }, /status/],
      [{ ...base, response: { headers: { a: 1 } } }, /headers/],
      [{ ...base, response: { bodyFollows: true } }, /no body follows/],
      [{ ...base, response: { bodyFollows: true }, body: 7 }, /body that is not JSON text/],
      [{ ...base, response: { status: 200 }, body: '{"a":1}' }, /a body beside a response that has none/],
      [{ ...base, ok: '{"response":{"status":200},"writes":[],"events":[]}', response: { status: 200 } }, /both in its text and as a value/],
    ];
    for (const [result, message] of cases) {
      expect(() => invoke(result), String(message)).toThrow(message);
      try {
        invoke(result);
      } catch (e) {
        expect((e as { code?: string }).code).toBe('handler_error');
      }
    }
  });
});
