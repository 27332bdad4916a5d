import { describe, expect, it } from 'vitest';
import { memoryTree } from './fakes.test-helper.js';
import { TxTree } from './tx.js';

describe('TxTree', () => {
  it('shows its own writes to reads and lists before commit, and nothing to the base', () => {
    const base = memoryTree();
    for (const id of ['a', 'c', 'e']) base.put('t', id, id);
    const tx = new TxTree(base);
    tx.put('t', 'b', 'b');
    tx.put('t', 'd', 'd');
    tx.delete('t', 'c');
    expect(tx.get('t', 'b')).toBe('b');
    expect(tx.get('t', 'c')).toBeUndefined();
    expect(tx.count('t')).toBe(4);
    expect(tx.list('t').items.map((i) => i.id)).toEqual(['a', 'b', 'd', 'e']);
    expect(tx.list('t', { reverse: true, limit: 2 })).toEqual({ items: [{ id: 'e', value: 'e' }, { id: 'd', value: 'd' }], hasMore: true });
    expect(tx.list('t', { after: 'b', limit: 1 }).items.map((i) => i.id)).toEqual(['d']);
    expect(base.get('t', 'b')).toBeUndefined();
    expect(base.count('t')).toBe(3);
  });

  it('applies everything on commit, and nothing when dropped', () => {
    const base = memoryTree();
    base.put('t', 'x', 1);
    const dropped = new TxTree(base);
    dropped.put('t', 'y', 2);
    dropped.delete('t', 'x');
    expect(base.get('t', 'x')).toBe(1);
    const kept = new TxTree(base);
    kept.put('t', 'y', 2);
    kept.delete('t', 'x');
    kept.commit();
    expect(base.get('t', 'x')).toBeUndefined();
    expect(base.get('t', 'y')).toBe(2);
  });

  it('does not put a buffered write past items of the base it has not seen', () => {
    const base = memoryTree();
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) base.put('t', id, id);
    const tx = new TxTree(base);
    tx.put('t', 'z', 'z');
    // Ascending with a limit: z sorts after everything and must not jump the queue.
    expect(tx.list('t', { limit: 3 }).items.map((i) => i.id)).toEqual(['a', 'b', 'c']);
  });

  it('hands out copies of a shared write, so changing what was read changes neither the maker\'s object nor the record', () => {
    const base = memoryTree();
    const tx = new TxTree(base);
    const made = { id: 'x', n: 1, inner: { k: 'v' } };
    tx.putShared('t', 'x', made);
    const read = tx.get<typeof made>('t', 'x')!;
    read.n = 2;
    read.inner.k = 'changed';
    const listed = tx.list<typeof made>('t').items[0]!.value;
    listed.inner.k = 'changed too';
    expect(made).toEqual({ id: 'x', n: 1, inner: { k: 'v' } });
    expect(tx.get('t', 'x')).toEqual({ id: 'x', n: 1, inner: { k: 'v' } });
    tx.commit();
    expect(base.get('t', 'x')).toEqual({ id: 'x', n: 1, inner: { k: 'v' } });
  });
});
