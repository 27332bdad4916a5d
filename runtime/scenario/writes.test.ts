import { describe, expect, it } from 'vitest';
import { KitError } from '../errors.js';
import { checkScenarioOutput, isScenarioType } from './writes.js';

function refusal(output: Parameters<typeof checkScenarioOutput>[1]): KitError {
  try {
    checkScenarioOutput('wreck', output);
  } catch (e) {
    expect(e).toBeInstanceOf(KitError);
    return e as KitError;
  }
  throw new Error('the output was not refused');
}

describe('checkScenarioOutput', () => {
  it("keeps a scenario's writes of its own scenario.* types, puts and deletions alike", () => {
    expect(() => checkScenarioOutput('count', { writes: [{ type: 'scenario.calls', id: 'n' }, { type: 'scenario.seen', id: 'cus_1' }], events: [] })).not.toThrow();
    expect(() => checkScenarioOutput('quiet', { writes: [], events: [] })).not.toThrow();
  });

  it("refuses a write of the twin's records with handler_error naming the handler, the type and the id", () => {
    const e = refusal({ writes: [{ type: 'scenario.calls', id: 'n' }, { type: 'account', id: 'acct_1' }, { type: 'customer', id: 'acct_1/cus_1' }], events: [] });
    expect([e.code, e.status]).toEqual(['handler_error', 500]);
    expect(e.details).toEqual({ handler: 'wreck', type: 'account', id: 'acct_1' });
    expect(e.message).toContain('Scenario handler "wreck" wrote the twin\'s record (type "account", id "acct_1")');
    expect(e.message).toContain('through its vendor API');
    expect(e.message).toContain('"scenario.');
  });

  it('refuses the bare prefix and look-alikes: only scenario.<something> is the scenario\'s', () => {
    for (const type of ['scenario.', 'scenario', 'scenarios', 'Scenario.calls', '__due']) {
      expect(isScenarioType(type)).toBe(false);
      expect(refusal({ writes: [{ type, id: 'x' }], events: [] }).details).toMatchObject({ type });
    }
  });

  it('refuses an emitted event, naming it', () => {
    const e = refusal({ writes: [{ type: 'scenario.calls', id: 'n' }], events: [{ type: 'webhook.delivery' }] });
    expect(e.code).toBe('handler_error');
    expect(e.details).toEqual({ handler: 'wreck', event: 'webhook.delivery' });
    expect(e.message).toContain('emitted the event "webhook.delivery"');
  });

  it('cuts a long id in the message', () => {
    const e = refusal({ writes: [{ type: 'customer', id: 'x'.repeat(5000) }], events: [] });
    expect(e.message.length).toBeLessThan(600);
  });
});
