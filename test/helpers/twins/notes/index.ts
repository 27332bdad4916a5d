/**
 * A twin for tests of roots: it keeps notes (`GET/PATCH /v1/notes/:id`, `GET /v1/notes`) and a
 * copy of a vendor's notes, read from `<root>/v1/notes?page=N` (answers `{ notes, next }`), and
 * folds the vendor's webhooks (`{ id, type: 'note.updated' | 'note.deleted', note }`, signed
 * as Stripe signs). `root.read` throws on an answer that is not 200, failing the refresh.
 */
import { defineTwin } from '../../../../sdk/twin/index.js';

interface Note {
  id: string;
  text: string;
}

export default defineTwin({
  vendor: 'notes',
  version: '1.0.0',
  protocol: 'http',
  models: { hosts: ['api.notes.test'], resources: ['note'] },
  routes: [
    {
      name: 'notes.list',
      match: { method: 'GET', path: '/v1/notes' },
      handle: (_request, ctx) => ({ body: { notes: ctx.tree.list<Note>('note', { limit: 100 }).items.map((i) => i.value) } }),
    },
    {
      name: 'notes.get',
      match: { method: 'GET', path: '/v1/notes/:id' },
      handle: (request, ctx) => {
        const note = ctx.tree.get<Note>('note', request.params['id']!);
        return note === undefined ? { status: 404, body: { error: 'no such note' } } : { body: note };
      },
    },
    {
      name: 'notes.update',
      match: { method: 'PATCH', path: '/v1/notes/:id' },
      handle: (request, ctx) => {
        const id = request.params['id']!;
        const note = ctx.tree.get<Note>('note', id);
        if (note === undefined) return { status: 404, body: { error: 'no such note' } };
        const updated = { ...note, text: String((request.body as { text?: unknown }).text) };
        ctx.tree.put('note', id, updated);
        return { body: updated };
      },
    },
  ],
  root: {
    refresh: { atMost: '1m' },
    start: () => [{ path: '/v1/notes', query: { page: '1' } }],
    read: (read, answer, ctx) => {
      if (answer.status !== 200) throw new Error(`the vendor answered ${answer.status}: ${answer.bodyText.slice(0, 200)}`);
      const body = answer.body as { notes: Note[]; next: number | null };
      for (const note of body.notes) ctx.tree.put('note', note.id, { id: note.id, text: note.text });
      return body.next === null ? [] : [{ path: '/v1/notes', query: { ...read.query, page: String(body.next) } }];
    },
    ingest: {
      scheme: 'stripe',
      event: (webhook, ctx) => {
        const event = webhook.body as { type: string; note: Note };
        if (event.type === 'note.updated') ctx.tree.put('note', event.note.id, { id: event.note.id, text: event.note.text });
        if (event.type === 'note.deleted') ctx.tree.delete('note', event.note.id);
      },
    },
  },
});
