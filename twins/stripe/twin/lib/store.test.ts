/**
 * Creation sequence numbers (`nextSeq` through `orderedId`): ids made later sort later, whether
 * an entry makes one object or many, and for an account numbered by a twin that stored its
 * counter on every create. Most entries store no counter. And which types an account lists
 * from their records (ordered ids) or from `ix.` copies (random ids).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Tree } from '../../../../sdk/twin/types.js';
import type { Call } from './request.js';
import { memoryTree, stubContext } from './fakes.test-helper.js';
import { insert, newId, save, unlist } from './store.js';
import { is, matching, newestFirst, newestWhere } from './lists.js';
import { metadataEntry } from './indexes.js';
import type { AccountState } from './account.js';
import { orderedId } from './ids.js';

const ACCT = 'acct_seqTest';

/** Ids the stand-in generator has drawn, across the calls of a test; each test starts at 0. */
const draws = { n: 0 };
beforeEach(() => {
  draws.n = 0;
});

/** A call at a log position: what orderedId reads of it (ctx.position, ctx.id, the tree, the account). */
function callAt(tree: Tree, position: number): Call {
  return { ctx: stubContext(position, draws), tree, acct: ACCT } as unknown as Call;
}

/** Makes `perEntry[i]` ids in the entry at position `first + i`; answers them in the order made. */
function make(tree: Tree, first: number, perEntry: number[]): string[] {
  const ids: string[] = [];
  perEntry.forEach((n, i) => {
    const c = callAt(tree, first + i);
    for (let k = 0; k < n; k++) ids.push(orderedId(c, 'cus_', 14));
  });
  return ids;
}

const account = (tree: Tree): AccountState | undefined => tree.get<AccountState>('account', ACCT);

describe('creation sequence numbers', () => {
  it('sort in the order made across entries, and an entry of a few stores no counter', () => {
    const tree = memoryTree();
    const ids = make(tree, 1, [1]);
    // A new account's first create stores its record (what kind of account it is); no later one does.
    expect(account(tree)).toEqual({ n: 17, hooks: 0, ix: 3, k: 1, bal: 1, ev: 1 });
    ids.push(...make(tree, 2, [2, 1, 16, 3]));
    expect(ids).toHaveLength(23);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(account(tree)?.n).toBe(17);
  });

  it('an entry that makes more than sixteen stores its last, and later entries start above it', () => {
    const tree = memoryTree();
    const ids = make(tree, 7, [40]);
    expect(account(tree)?.n).toBe(7 * 16 + 40);
    ids.push(...make(tree, 8, [1, 1]), ...make(tree, 10, [1]));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('an account numbered ahead of its position (a counter stored on every create) goes on above its counter', () => {
    const tree = memoryTree();
    tree.put('account', ACCT, { n: 5000, hooks: 2 });
    const ids = make(tree, 3, [1, 2]);
    expect(account(tree)).toEqual({ n: 5003, hooks: 2 });
    // Position 400 starts above 6400, past the stored 5003: numbering follows positions again.
    ids.push(...make(tree, 400, [1, 1]));
    expect(account(tree)).toEqual({ n: 5003, hooks: 2 });
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0]?.slice(0, 10)).toBe('cus_0001If'); // 5001 in base 62
  });
});

describe('ordered ids of the payment flow\'s types', () => {
  /** Makes three payment intents, one entry each from `first`; answers their ids and what the account lists, newest first. */
  function makeIntents(tree: Tree, first: number): { ids: string[]; listed: string[] } {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const c = callAt(tree, first + i);
      const id = newId(c, 'payment_intent', 'pi_', 24);
      insert(c, 'payment_intent', { id, object: 'payment_intent', customer: null });
      ids.push(id);
    }
    const listed = [...newestFirst(callAt(tree, first + 3), 'payment_intent')].map((r) => r.o.id as string);
    return { ids, listed };
  }

  it('a new account orders them and lists them from their records, with no ix. copy', () => {
    const tree = memoryTree();
    const { ids, listed } = makeIntents(tree, 1);
    for (const id of ids) expect(id).toMatch(/^pi_[0-9A-Za-z]{24}$/);
    expect([...ids].sort()).toEqual(ids);
    expect(listed).toEqual([...ids].reverse());
    expect(tree.count(`ix.payment_intent.${ACCT}`)).toBe(0);
  });

  it('an account begun before (its record without k) keeps random ids and lists them from ix. copies', () => {
    const tree = memoryTree();
    tree.put('account', ACCT, { n: 10, hooks: 0, ix: 1 });
    const { ids, listed } = makeIntents(tree, 3);
    // The stand-in generator draws 'pi_000…', 'pi_111…', 'pi_222…': no sequence in front.
    expect(ids).toEqual(['pi_' + '0'.repeat(24), 'pi_' + '1'.repeat(24), 'pi_' + '2'.repeat(24)]);
    expect(listed).toEqual([...ids].reverse());
    expect(tree.count(`ix.payment_intent.${ACCT}`)).toBe(3);
    expect(account(tree)).toEqual({ n: 10, hooks: 0, ix: 1 });
  });
});

describe('equality indexes added after an account began', () => {
  /** Three prices with lookup keys; then drops what the lookup-key index holds, as for prices made before it existed. */
  function pricesFiledBefore(tree: Tree): string[] {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const c = callAt(tree, 1 + i);
      const id = newId(c, 'price', 'price_', 24);
      insert(c, 'price', { id, object: 'price', product: 'prod_1', lookup_key: `key_${i}` });
      ids.push(id);
    }
    for (const { id } of tree.list(`by.price.lookup_key.${ACCT}`).items) tree.delete(`by.price.lookup_key.${ACCT}`, id);
    return ids;
  }
  const byKey = (tree: Tree, key: string): string[] => [...newestWhere(callAt(tree, 10), 'price', is('lookup_key', key))].map((r) => r.o.id as string);

  it('an account whose indexes predate the lookup-key one finds prices by walking them all', () => {
    const tree = memoryTree();
    tree.put('account', ACCT, { n: 0, hooks: 0, ix: 1, k: 1 });
    const ids = pricesFiledBefore(tree);
    expect(byKey(tree, 'key_1')).toEqual([ids[1]]);
    // Its older index (product) is still read: a stray entry put in it shows up in the answer.
    tree.put(`by.price.product.${ACCT}`, `6:prod_1/${'9'.repeat(12)}`, ids[2]);
    expect([...newestWhere(callAt(tree, 10), 'price', is('product', 'prod_1'))].map((r) => r.o.id)).toEqual([ids[2], ids[2], ids[1], ids[0]]);
  });

  it('a new account reads the lookup-key index, so a price missing from it is not found', () => {
    const tree = memoryTree();
    const ids = pricesFiledBefore(tree);
    expect(account(tree)?.ix).toBe(3);
    expect(byKey(tree, 'key_1')).toEqual([]);
    tree.put(`by.price.lookup_key.${ACCT}`, `5:key_1/000000000001`, ids[1]);
    expect(byKey(tree, 'key_1')).toEqual([ids[1]]);
  });
});

describe('indexes whose values are computed', () => {
  /** Customers with these emails, one entry each from position 1; answers their ids. */
  function customers(tree: Tree, emails: string[]): string[] {
    return emails.map((email, i) => {
      const c = callAt(tree, 1 + i);
      const id = orderedId(c, 'cus_', 14);
      insert(c, 'customer', { id, object: 'customer', email, metadata: {} });
      return id;
    });
  }
  const found = (tree: Tree, f: ReturnType<typeof is>): string[] => [...newestWhere(callAt(tree, 50), 'customer', f)].map((r) => r.o.id as string);
  const filed = (tree: Tree, index: string): string[] => tree.list<string>(`by.customer.${index}.${ACCT}`).items.map((i) => `${i.id.replace(/\/\d+$/, '')} ${i.value}`);

  it('a new account files emails in lower case; the exact filter reads that index and filters what it reads', () => {
    const tree = memoryTree();
    const [ada, shout] = customers(tree, ['ada@example.com', 'ADA@example.com']);
    expect(filed(tree, 'email_folded')).toEqual([`15:ada@example.com ${ada}`, `15:ada@example.com ${shout}`]);
    expect(tree.count(`by.customer.email.${ACCT}`)).toBe(0);
    expect(found(tree, is('email', 'ADA@example.com'))).toEqual([shout]);
    expect(found(tree, matching('customer', 'email', 'Ada@Example.com'))).toEqual([shout, ada]);
  });

  it('an account begun at version 2 keeps its exact email index, and a search in any case walks', () => {
    const tree = memoryTree();
    tree.put('account', ACCT, { n: 0, hooks: 0, ix: 2, k: 1 });
    const [ada, shout] = customers(tree, ['ada@example.com', 'ADA@example.com']);
    expect(filed(tree, 'email')).toEqual([`15:ADA@example.com ${shout}`, `15:ada@example.com ${ada}`]);
    expect(tree.count(`by.customer.email_folded.${ACCT}`)).toBe(0);
    expect(tree.count(`by.customer.metadata.${ACCT}`)).toBe(0);
    expect(found(tree, is('email', 'ada@example.com'))).toEqual([ada]);
    // Its exact index cannot serve a match in any case: every customer is read.
    expect(found(tree, matching('customer', 'email', 'Ada@Example.com'))).toEqual([shout, ada]);
  });

  it('an account with events and no record is read at the index version it filed under', () => {
    // As a twin that stored no record until it needed one left it: customers and their events.
    const begun = (version: number): { tree: Tree; ada: string } => {
      const tree = memoryTree();
      tree.put('account', ACCT, { n: 0, hooks: 0, ix: version, k: 1 });
      const [ada] = customers(tree, ['Ada@example.com']);
      tree.put('event', `${ACCT}/evt_${'0'.repeat(24)}`, { s: 1, o: { id: `evt_${'0'.repeat(24)}`, object: 'event', created: 1 } });
      tree.delete('account', ACCT);
      return { tree, ada: ada as string };
    };
    for (const version of [2, 3]) {
      const { tree, ada } = begun(version);
      expect(found(tree, is('email', 'Ada@example.com')), `version ${version}`).toEqual([ada]);
      // Its next customer is filed as the others were, and found beside them.
      const c = callAt(tree, 10);
      const bob = orderedId(c, 'cus_', 14);
      insert(c, 'customer', { id: bob, object: 'customer', email: 'Ada@example.com', metadata: {} });
      expect(tree.get<AccountState>('account', ACCT)?.ix, `version ${version}`).toBe(version);
      expect(found(tree, is('email', 'Ada@example.com')), `version ${version}`).toEqual([bob, ada]);
    }
  });

  it('the metadata index holds each live object\'s entries, key as written and value in lower case', () => {
    const tree = memoryTree();
    const c = callAt(tree, 1);
    const id = orderedId(c, 'cus_', 14);
    insert(c, 'customer', { id, object: 'customer', metadata: { Team: 'Blue', n: '1' } });
    expect(filed(tree, 'metadata').map((e) => e.split(' ')[0])).toEqual(['11:4:Team=blue', '5:1:n=1']);
    save(callAt(tree, 2), 'customer', { id, object: 'customer', metadata: { Team: 'Red' } });
    expect(filed(tree, 'metadata')).toEqual([`10:4:Team=red ${id}`]);
    expect(found(tree, matching('customer', 'metadata', metadataEntry('Team', 'RED')))).toEqual([id]);
    expect(found(tree, matching('customer', 'metadata', metadataEntry('team', 'red')))).toEqual([]);
    unlist(callAt(tree, 3), 'customer', id, { id, object: 'customer', deleted: true });
    expect(filed(tree, 'metadata')).toEqual([]);
  });
});
