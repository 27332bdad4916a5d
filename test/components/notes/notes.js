/**
 * The notes vendor: create, list (newest first), get, and archive later (a timed move), with
 * its own error shape. Plain JavaScript with no imports, written against a small `io` so the
 * same code is the WebAssembly component (component.js, through the kit:twin world) and a
 * JavaScript twin (twin.ts, through defineTwin): the bench compares the two forms of one twin.
 *
 * io: { get(type, id) → value | undefined, list(type, { after?, before?, limit, reverse? }) → { items: [{ id, value }], hasMore },
 *       put(type, id, value), schedule(id, move, dueAt, data), emit(type, data), id(prefix) → string, nowMs, position }
 *
 * Records: `note/<id>` → the note plus `seq` (the log position that made it);
 * `note_by_seq/<seq, 12 digits>` → `{ id }`, the creation index a list walks downward.
 */

export const NOTE = 'note';
export const BY_SEQ = 'note_by_seq';

export const manifest = {
  vendor: 'notes',
  version: '0.1.0',
  protocol: 'http',
  models: { hosts: ['api.notes.test'], resources: ['note'], endpointEnv: ['NOTES_API_URL'] },
  requestScopes: [],
  routes: [
    { name: 'notes.create', match: { method: 'POST', path: '/v1/notes' } },
    { name: 'notes.list', match: { method: 'GET', path: '/v1/notes' } },
    { name: 'notes.get', match: { method: 'GET', path: '/v1/notes/:id' } },
    { name: 'notes.archive', match: { method: 'POST', path: '/v1/notes/:id/archive' } },
  ],
  stores: ['notes'],
  moves: ['archive'],
  scenarios: true,
};

/** The vendor's error shape (JSON:API style, unlike Stripe's): `{ errors: [{ status, code, detail, source? }] }`. */
export function errorBody(status, code, detail, field) {
  const error = { status: String(status), code, detail };
  if (field !== undefined) error.source = { pointer: `/${field}` };
  return { errors: [error] };
}

class Refusal extends Error {
  constructor(status, code, detail, field) {
    super(detail);
    this.status = status;
    this.code = code;
    this.field = field;
  }
}

function seqKey(seq) {
  return String(seq).padStart(12, '0');
}

function present(stored) {
  const { seq: _seq, ...note } = stored;
  return note;
}

function text(value, field, max, required) {
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || value.trim() === '' || value.length > max) {
    throw new Refusal(400, 'invalid_field', `${field} must be a non-empty string of at most ${max} characters.`, field);
  }
  return value;
}

function integer(value, field, min, max) {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) throw new Refusal(400, 'invalid_field', `${field} must be an integer from ${min} to ${max}.`, field);
  return n;
}

function bodyOf(request) {
  const body = request.body ?? {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Refusal(400, 'invalid_body', 'The body must be a JSON object.');
  return body;
}

function load(io, id) {
  const note = io.get(NOTE, id);
  if (note === undefined) throw new Refusal(404, 'not_found', `No note '${id}'.`);
  return note;
}

const routes = {
  'notes.create'(request, io) {
    const body = bodyOf(request);
    for (const key of Object.keys(body)) if (key !== 'title' && key !== 'body') throw new Refusal(400, 'unknown_field', `Unknown field: ${key}.`, key);
    const title = text(body.title, 'title', 200, true);
    const content = text(body.body, 'body', 10_000, false) ?? '';
    const note = { id: io.id('note_'), object: 'note', title, body: content, archived: false, archive_at: null, created_ms: io.nowMs, seq: io.position };
    io.put(NOTE, note.id, note);
    io.put(BY_SEQ, seqKey(note.seq), { id: note.id });
    io.emit('note.created', present(note));
    return { status: 201, body: present(note) };
  },
  'notes.list'(request, io) {
    const limit = request.query.limit === undefined ? 10 : integer(request.query.limit, 'limit', 1, 100);
    let before;
    if (request.query.after !== undefined) before = seqKey(load(io, String(request.query.after)).seq);
    const page = io.list(BY_SEQ, { reverse: true, before, limit });
    const data = [];
    for (const item of page.items) {
      const note = io.get(NOTE, item.value.id);
      if (note !== undefined) data.push(present(note));
    }
    return { status: 200, body: { object: 'list', data, has_more: page.hasMore } };
  },
  'notes.get'(request, io) {
    return { status: 200, body: present(load(io, request.params.id)) };
  },
  'notes.archive'(request, io) {
    const note = load(io, request.params.id);
    const body = bodyOf(request);
    const inSeconds = integer(body.in_seconds ?? 0, 'in_seconds', 0, 365 * 24 * 3600);
    const dueAt = new Date(io.nowMs + inSeconds * 1000).toISOString();
    io.schedule(note.id, 'archive', dueAt, { id: note.id });
    const updated = { ...note, archive_at: dueAt };
    io.put(NOTE, note.id, updated);
    return { status: 200, body: present(updated) };
  },
};

/** A route by its manifest name: `{ status, body }`; a refusal is the vendor's error answer. */
export function route(name, request, io) {
  try {
    return routes[name](request, io);
  } catch (e) {
    if (e instanceof Refusal) return { status: e.status, body: errorBody(e.status, e.code, e.message, e.field) };
    throw e;
  }
}

/** The `archive` move: the note is archived at its instant. */
export function archive(io, data) {
  const note = io.get(NOTE, data.id);
  if (note === undefined || note.archived) return;
  const archived = { ...note, archived: true };
  io.put(NOTE, note.id, archived);
  io.emit('note.archived', present(archived));
}

/** The `notes` store: every note, oldest first, and how many are archived. */
export function notesStore(io) {
  const notes = [];
  let after;
  for (;;) {
    const page = io.list(BY_SEQ, { after, limit: 100 });
    for (const item of page.items) {
      const note = io.get(NOTE, item.value.id);
      if (note !== undefined) notes.push(present(note));
    }
    if (!page.hasMore || page.items.length === 0) break;
    after = page.items[page.items.length - 1].id;
  }
  return { count: notes.length, archived: notes.filter((n) => n.archived).length, notes };
}
