/**
 * `insertWithEvent` / `saveWithEvent`: the record and its event share one copy of the object,
 * so neither the caller changing its object afterwards nor a handler changing what it read
 * of the record reaches the other. The entry names each event (`{ id, type, account }`).
 */
import { describe, expect, it } from 'vitest';
import type { Call } from './request.js';
import { insertWithEvent, saveWithEvent } from './events.js';
import { memoryTree, stubContext } from './fakes.test-helper.js';
import { TxTree } from './tx.js';
import type { Obj } from './util.js';

const ACCT = 'acct_eventsTest';

function call(): Call & { tree: TxTree } {
  return {
    ctx: stubContext(1, undefined, 1_700_000_000_000), tree: new TxTree(memoryTree()), acct: ACCT, requestId: 'req_test', idempotencyKey: null, now: 1_700_000_000,
    emits: [], schedules: [], endpoints: undefined,
  } as unknown as Call & { tree: TxTree };
}

const amountOf = (c: Call & { tree: TxTree }, id: string): unknown => c.tree.get<{ o: Obj }>('payment_intent', `${ACCT}/${id}`)?.o.amount;
/** The amount in the object of the i-th event the call recorded, read through the event the entry names. */
const emitted = (c: Call & { tree: TxTree }, i: number): unknown => {
  const named = c.emits[i]?.data as { id: string; type: string; account: string };
  expect(named.account).toBe(ACCT);
  const evt = c.tree.get<{ o: Obj }>('event', `${ACCT}/${named.id}`)?.o as Obj;
  expect(evt.type).toBe(named.type);
  return ((evt.data as Obj).object as Obj).amount;
};

describe('a record and its event from one copy', () => {
  it('keeps both as they were when stored, whatever the caller or a reader changes afterwards', () => {
    const c = call();
    const pi: Obj = { id: 'pi_' + 'x'.repeat(24), object: 'payment_intent', amount: 100, customer: null };
    insertWithEvent(c, 'payment_intent', pi, 'payment_intent.created');
    pi.amount = 200;
    const read = c.tree.get<{ o: Obj }>('payment_intent', `${ACCT}/${pi.id as string}`);
    (read as { o: Obj }).o.amount = 300;
    expect(amountOf(c, pi.id as string)).toBe(100);
    expect(emitted(c, 0)).toBe(100);

    saveWithEvent(c, 'payment_intent', pi, 'payment_intent.succeeded');
    pi.amount = 400;
    expect(amountOf(c, pi.id as string)).toBe(200);
    expect(emitted(c, 0)).toBe(100);
    expect(emitted(c, 1)).toBe(200);
    // The entry names the events, nothing more: the objects are in the event records.
    expect(c.emits.map((e) => Object.keys(e.data as Obj))).toEqual([['id', 'type', 'account'], ['id', 'type', 'account']]);
    expect(c.emits.map((e) => e.type)).toEqual(['payment_intent.created', 'payment_intent.succeeded']);
  });
});
