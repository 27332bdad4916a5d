/**
 * The widget resource through a real world: `kit twin test` builds the twin, serves it
 * (untrusted, in QuickJS, as a world serves it) and runs this file with `node --test`.
 * `world()` gives the world's URL, token and clock; `client.ts` is the app's side.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { world } from 'twinkit/twin/testing';
import { ApiError, client } from './client.js';

const w = world();
const api = client(w.twinUrl, w.token);

test('creates a widget and reads it back', async () => {
  const made = await api.widgets.create({ name: 'Sprocket' });
  assert.match(made.id, /^wgt_/);
  assert.equal(made.status, 'active');
  assert.deepEqual(await api.widgets.retrieve(made.id), made);
});

test('lists newest first, a page at a time', async () => {
  const a = await api.widgets.create({ name: 'a' });
  const b = await api.widgets.create({ name: 'b' });
  const page = await api.widgets.list({ limit: 1 });
  assert.deepEqual([page.data.map((x) => x.id), page.has_more], [[b.id], true]);
  const next = await api.widgets.list({ limit: 1, starting_after: b.id });
  assert.deepEqual(next.data.map((x) => x.id), [a.id]);
});

test('answers errors in the vendor shape', async () => {
  await assert.rejects(api.widgets.retrieve('wgt_nope'), (e: unknown) => {
    assert.ok(e instanceof ApiError);
    assert.equal(e.status, 404);
    assert.deepEqual(e.body, { error: { type: 'invalid_request_error', code: 'resource_missing', message: "No such widget: 'wgt_nope'", param: 'id' } });
    return true;
  });
  await assert.rejects(api.widgets.create({ name: '' }), (e: unknown) => e instanceof ApiError && e.status === 400 && e.body.error?.param === 'name');
});

test('activates a widget when the world clock passes activate_in (a timed move)', async () => {
  const made = await api.widgets.create({ name: 'Later', activate_in: 90 });
  assert.equal(made.status, 'pending');
  await w.advance('89s');
  assert.equal((await api.widgets.retrieve(made.id)).status, 'pending');
  await w.advance('1s');
  const done = await api.widgets.retrieve(made.id);
  assert.equal(done.status, 'active');
  // The move is an entry of the twin's log, stamped at the instant it fell due.
  const moved = (await w.log()).find((e) => e.cause['kind'] === 'move' && e.writes.some((x) => x.id === made.id));
  assert.equal(moved?.occurredAt, new Date(done.active_at * 1000).toISOString());
});

test('shows its state in the widgets store', async () => {
  const made = await api.widgets.create({ name: 'Stored', activate_in: 60 });
  const store = await w.store<{ count: number; widgets: { id: string; status: string }[] }>('widgets', { status: 'pending' });
  assert.ok(store.widgets.some((x) => x.id === made.id && x.status === 'pending'));
  await api.widgets.del(made.id);
  const after = await w.store<{ widgets: { id: string }[] }>('widgets');
  assert.ok(!after.widgets.some((x) => x.id === made.id));
});
