/**
 * The balance kept as sums (balance.ts) against the balance summed from every transaction, as
 * an account begun before the sums has it: the same available and pending amounts after any
 * mix of transactions in several currencies, available at once or later, while the clock
 * moves; passed buckets folded by the next transaction; and a call on a test clock's time
 * ahead of the world's folds nothing the world's clock has not passed.
 */
import { describe, expect, it } from 'vitest';
import { seededRandom as random } from '../../../../test/helpers/random.js';
import type { Tree, TwinContext } from '../../../../sdk/twin/types.js';
import type { Call } from '../lib/request.js';
import { memoryTree } from '../lib/fakes.test-helper.js';
import { balanceSums } from './balance.js';
import { balanceTxn } from './payments.js';

const SUMMED = 'acct_ledgerSums';
const SCANNED = 'acct_ledgerScan';
const DAY = 86_400;

/** A world: one tree, one clock, entries at increasing positions; calls for either account. */
function world(startS: number) {
  const tree = memoryTree();
  let nowS = startS;
  let position = 0;
  let draws = 0;
  const call = (acct: string, callNowS = nowS): Call => {
    const ctx = {
      position: ++position,
      id: (prefix: string, length = 14) => prefix + String(draws++).padStart(length, '0'),
      nowMs: () => nowS * 1000,
    } as unknown as TwinContext;
    return { ctx, tree, acct, now: callNowS, nowMs: callNowS * 1000 } as unknown as Call;
  };
  // The scanned account was begun by a twin without the sums: its record has no `bal`.
  tree.put('account', SCANNED, { n: 0, hooks: 0, ix: 2, k: 1 });
  return { tree, call, advance: (s: number) => void (nowS += s), now: () => nowS };
}

const plain = (m: Map<string, number>): Record<string, number> => Object.fromEntries([...m].sort(([a], [b]) => (a < b ? -1 : 1)));

function sums(c: Call): { available: Record<string, number>; pending: Record<string, number> } {
  const { available, pending } = balanceSums(c);
  return { available: plain(available), pending: plain(pending) };
}

const buckets = (tree: Tree, acct: string): string[] => tree.list(`bal.${acct}`).items.map((i) => i.id);
/** A bucket's id: the instant as twelve digits, then the currency. */
const bucket = (at: number, cur: string): string => `${String(at).padStart(12, '0')}/${cur}`;

describe('the balance kept as sums', () => {
  for (const seed of [1, 2, 3]) {
    it(`matches the balance summed from every transaction (seed ${seed})`, () => {
      const next = random(seed);
      const w = world(1_790_000_000);
      const currencies = ['usd', 'eur', 'gbp'];
      for (let step = 0; step < 400; step++) {
        const roll = next();
        if (roll < 0.2) {
          w.advance(Math.floor(next() * 3 * DAY));
        } else {
          const cur = currencies[Math.floor(next() * currencies.length)] as string;
          const amount = Math.floor(next() * 20_000) - 5_000;
          const fee = Math.floor(next() * 100);
          // Available now, in an hour, in a day or two, or (a late entry) already in the past.
          const delay = [0, 3600, DAY, 2 * DAY, -DAY][Math.floor(next() * 5)] as number;
          for (const acct of [SUMMED, SCANNED]) balanceTxn(w.call(acct), `src_${step}`, 'charge', amount, cur, null, fee, w.now() + delay);
        }
        if (step % 10 === 0 || roll < 0.2) expect(sums(w.call(SUMMED))).toEqual(sums(w.call(SCANNED)));
      }
      expect(sums(w.call(SUMMED))).toEqual(sums(w.call(SCANNED)));
      // Only the scanned account sums every transaction; the other keeps no bucket the clock has
      // passed beyond the ones since its last transaction, and one per instant, not per transaction.
      expect(w.tree.get('balance', SCANNED)).toBeUndefined();
      expect(buckets(w.tree, SCANNED)).toEqual([]);
      expect(buckets(w.tree, SUMMED).length).toBeLessThan(w.tree.count('balance_transaction') / 2);
    });
  }

  it('folds the buckets the clock has passed into the available sums at the next transaction', () => {
    const w = world(1_790_000_000);
    const start = w.now();
    for (let i = 0; i < 5; i++) balanceTxn(w.call(SUMMED), `ch_${i}`, 'charge', 1000, 'usd', null, 30, start + 2 * DAY);
    balanceTxn(w.call(SUMMED), 'ch_eur', 'charge', 500, 'eur', null, 0, start + DAY);
    expect(buckets(w.tree, SUMMED)).toEqual([bucket(start + DAY, 'eur'), bucket(start + 2 * DAY, 'usd')]);
    expect(w.tree.get('balance', SUMMED)).toEqual({ available: { usd: 0, eur: 0 }, next: start + DAY });
    expect(sums(w.call(SUMMED))).toEqual({ available: { eur: 0, usd: 0 }, pending: { eur: 500, usd: 4850 } });
    w.advance(DAY);
    // Read, not written: the passed bucket counts as available before anything folds it.
    expect(sums(w.call(SUMMED))).toEqual({ available: { eur: 500, usd: 0 }, pending: { eur: 0, usd: 4850 } });
    expect(buckets(w.tree, SUMMED)).toHaveLength(2);
    balanceTxn(w.call(SUMMED), 're_1', 'refund', -200, 'usd', null, 0, w.now());
    expect(buckets(w.tree, SUMMED)).toEqual([bucket(start + 2 * DAY, 'usd')]);
    expect(w.tree.get('balance', SUMMED)).toEqual({ available: { usd: -200, eur: 500 }, next: start + 2 * DAY });
    expect(sums(w.call(SUMMED))).toEqual({ available: { eur: 500, usd: -200 }, pending: { eur: 0, usd: 4850 } });
  });

  it('a call on a test clock ahead of the world folds only what the world clock has passed', () => {
    const w = world(1_790_000_000);
    const start = w.now();
    balanceTxn(w.call(SUMMED), 'ch_now', 'charge', 1000, 'usd', null, 0, start + 2 * DAY);
    // An invoice paid on a test clock a month ahead: its own funds come two days after that.
    const ahead = w.call(SUMMED, start + 30 * DAY);
    balanceTxn(ahead, 'ch_ahead', 'charge', 700, 'usd', null, 0, start + 32 * DAY);
    expect(buckets(w.tree, SUMMED)).toHaveLength(2);
    expect(sums(w.call(SUMMED))).toEqual({ available: { usd: 0 }, pending: { usd: 1700 } });
  });

  it('an account with no transactions has a zero balance in no currency yet', () => {
    const w = world(1_790_000_000);
    expect(sums(w.call(SUMMED))).toEqual({ available: {}, pending: {} });
  });
});
