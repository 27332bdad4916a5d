/**
 * How the world page writes a change's records (pages/world/diff.ts), from Node: the records are
 * those a world's own changeset holds (a Stripe product made and renamed, a GitHub label deleted),
 * cut by the runtime, so the page is checked against the shapes the world answers.
 */
import { describe, expect, it } from 'vitest';
import { recordDiff, shownValue, splitWrites } from '../../pages/world/diff.js';
import { openTestWorld } from '../helpers/world.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- answers as parsed

/** How an app's key reaches each twin in a world of its own (the host's `x-kit-auth`: the world's token). */
const AUTH: Record<string, Record<string, string>> = { stripe: { authorization: 'Bearer sk_test_diff0key000000000001' }, github: { 'x-kit-auth': 'authorization' } };

async function cutOf(vendor: string, requests: { method: string; path: string; body?: string; type?: string }[]): Promise<Json> {
  const world = await openTestWorld({ vendors: [vendor], world: 'diff' });
  try {
    for (const r of requests) {
      const res = await world.vendor(r.method, `/${vendor}${r.path}`, r.body, { ...AUTH[vendor], ...(r.type === undefined ? {} : { 'content-type': r.type }) });
      expect(res.status, `${r.method} ${r.path}: ${res.text.slice(0, 200)}`).toBeLessThan(300);
    }
    const cut = await world.api('POST', '/changesets', { message: 'diff' });
    expect(cut.status).toBe(201);
    return cut.json as Json;
  } finally {
    await world.close();
  }
}

describe('the world page reads a change as a diff', () => {
  it('reads a Stripe record stored as { s, o } as the vendor object: made field by field, then only the field renamed', async () => {
    const form = 'application/x-www-form-urlencoded';
    const cut = await cutOf('stripe', [{ method: 'POST', path: '/v1/products', body: 'name=Pro&metadata[tier]=gold', type: form }]);
    const made = cut['changes'][0] as Json;
    const { subjects, others } = splitWrites(made['writes'], made['answer']);
    // The product the answer names first; the account's counters, its event and the indexes beside it.
    expect(subjects.map((w: Json) => w['type'])).toEqual(['product']);
    expect(others.map((w: Json) => w['type'])).toEqual(expect.arrayContaining(['event']));
    const diff = recordDiff(subjects[0]!.before, subjects[0]!.after);
    expect(diff.kind).toBe('created');
    const fields = new Map(diff.fields.map((f) => [f.field, f]));
    expect(fields.get('name')).toEqual({ field: 'name', before: undefined, after: 'Pro' });
    expect(fields.get('metadata.tier')?.after).toBe('gold');
    expect([...fields.keys()].some((f) => f === 's' || f.startsWith('o.'))).toBe(false);
    expect(shownValue(undefined).text).toBe('(none)');
    expect(shownValue('Pro').text).toBe('"Pro"');

    const product = (subjects[0]!.after as Json)['o'] as Json;
    const renamed = recordDiff({ s: 1, o: product }, { s: 1, o: { ...product, name: 'Pro 2', metadata: {} } });
    expect(renamed.kind).toBe('changed');
    // Only what differs: the name, and the tier gone from a metadata now empty.
    expect(renamed.fields).toHaveLength(3);
    expect(renamed.fields).toEqual(
      expect.arrayContaining([
        { field: 'name', before: 'Pro', after: 'Pro 2' },
        { field: 'metadata.tier', before: 'gold', after: undefined },
        { field: 'metadata', before: undefined, after: {} },
      ]),
    );
  });

  it('reads a GitHub label deleted: its fields go, the record is deleted', async () => {
    const json = 'application/json';
    const cut = await cutOf('github', [
      { method: 'POST', path: '/user/repos', body: JSON.stringify({ name: 'shop' }), type: json },
      { method: 'POST', path: '/repos/admin/shop/labels', body: JSON.stringify({ name: 'bug', color: 'ff0000' }), type: json },
      { method: 'DELETE', path: '/repos/admin/shop/labels/bug' },
    ]);
    const deleted = (cut['changes'] as Json[]).find((c) => c['request']['method'] === 'DELETE')!;
    const label = (deleted['writes'] as Json[]).find((w) => w['after'] === null && w['before'] !== null && w['before']['name'] === 'bug');
    expect(label, JSON.stringify(deleted['writes']).slice(0, 500)).toBeDefined();
    const diff = recordDiff(label!['before'], label!['after']);
    expect(diff.kind).toBe('deleted');
    expect(diff.fields).toContainEqual({ field: 'name', before: 'bug', after: undefined });
    expect(diff.fields).toContainEqual({ field: 'color', before: 'ff0000', after: undefined });
  });

  it('names array items by index, and keeps a record with s and o beside other fields as it is', () => {
    expect(recordDiff({ items: [{ price: 'a' }] }, { items: [{ price: 'b' }, { price: 'c' }] }).fields).toEqual([
      { field: 'items[0].price', before: 'a', after: 'b' },
      { field: 'items[1].price', before: undefined, after: 'c' },
    ]);
    expect(recordDiff({ s: 1, o: { a: 1 }, x: 1 }, { s: 1, o: { a: 2 }, x: 1 }).fields).toEqual([{ field: 'o.a', before: 1, after: 2 }]);
    expect(recordDiff({ n: 1 }, { n: 1 }).kind).toBe('unchanged');
  });
});
