/**
 * The notes twin as a WebAssembly component of the `kit:twin` world (sdk/wit/twin.wit):
 * componentized with jco (componentize-qjs) by build.ts. It maps the world's typed records to
 * notes.js and back: reads through the `tree` import, ids from the `entropy` import, writes
 * returned, never performed.
 */
import { get, list } from 'kit:twin/tree@0.1.0';
import { id as entropyId } from 'kit:twin/entropy@0.1.0';
import { archive, errorBody, manifest as notesManifest, notesStore, route } from './notes.js';

/** Timed moves are records (sdk/wit/README.md): `__due/<due ms, 15 digits>:<id>` and `__due_id/<id>`. */
const DUE = '__due';
const DUE_ID = '__due_id';

function dueKey(dueAt, id) {
  return `${String(Date.parse(dueAt)).padStart(15, '0')}:${id}`;
}

/** The manifest as the WIT record: `methods` is a list, the query/header/body matchers empty. */
export function manifest() {
  return {
    vendor: notesManifest.vendor,
    version: notesManifest.version,
    protocol: notesManifest.protocol,
    models: { hosts: notesManifest.models.hosts, resources: notesManifest.models.resources, endpointEnv: notesManifest.models.endpointEnv },
    requestScopes: [],
    routes: notesManifest.routes.map((r) => ({ name: r.name, match: { methods: [r.match.method], path: r.match.path, query: [], headers: [], body: [] } })),
    stores: notesManifest.stores,
    moves: notesManifest.moves,
    scenarios: notesManifest.scenarios,
  };
}

/**
 * One call's view of the tree: committed reads through the import, this call's writes
 * buffered (a later `get` sees them; notes lists only before it writes) and returned in
 * first-write order.
 */
function callIo(context, readOnly) {
  const writes = new Map();
  const events = [];
  return {
    nowMs: Number(context.nowMs),
    position: Number(context.position),
    get(type, id) {
      const key = `${type}\u0000${id}`;
      if (writes.has(key)) return writes.get(key).value ?? undefined;
      const json = get(type, id);
      // An absent option arrives as null or undefined, whichever the bindings make.
      return json == null ? undefined : JSON.parse(json);
    },
    list(type, options) {
      const page = list(type, { after: options.after, before: options.before, limit: options.limit, reverse: options.reverse === true });
      return { items: page.items.map((item) => ({ id: item.id, value: JSON.parse(item.value) })), hasMore: page.hasMore };
    },
    put(type, id, value) {
      if (readOnly) throw new Error('a store cannot write');
      writes.set(`${type}\u0000${id}`, { type, id, value });
    },
    /** Schedules `move` at `dueAt`, replacing the earlier schedule of the same id. */
    schedule(id, move, dueAt, data) {
      const earlier = this.get(DUE_ID, id);
      if (earlier !== undefined) this.put(DUE, earlier.key, null);
      const key = dueKey(dueAt, id);
      this.put(DUE, key, { id, move, dueAt, data });
      this.put(DUE_ID, id, { key });
    },
    /** A move removes its own schedule records (and the pointer, when it still points there). */
    unschedule(id, dueAt) {
      const key = dueKey(dueAt, id);
      this.put(DUE, key, null);
      const pointer = this.get(DUE_ID, id);
      if (pointer !== undefined && pointer.key === key) this.put(DUE_ID, id, null);
    },
    emit(type, data) {
      events.push({ type, data: JSON.stringify(data) });
    },
    id(prefix) {
      return entropyId(prefix, 14);
    },
    output(response) {
      const out = [];
      for (const w of writes.values()) out.push(w.value === null ? { type: w.type, id: w.id } : { type: w.type, id: w.id, value: JSON.stringify(w.value) });
      return { response, writes: out, events };
    },
  };
}

function jsonResponse(status, body) {
  return { status, headers: [], body: JSON.stringify(body) };
}

/** The request as notes.js reads it: params and query as objects, the JSON body parsed. */
function requestOf(r) {
  const params = {};
  for (const p of r.params) params[p.name] = p.value;
  const query = {};
  for (const q of r.query) query[q.name] = q.values.length === 1 ? q.values[0] : q.values;
  return { method: r.method, path: r.path, params, query, body: r.body == null ? undefined : JSON.parse(r.body) };
}

export function invoke(context, invocation) {
  const io = callIo(context, invocation.tag === 'store');
  try {
    switch (invocation.tag) {
      case 'route': {
        const name = notesManifest.routes[invocation.val.index]?.name;
        if (name === undefined) throw new Error(`no route ${invocation.val.index}`);
        const answer = route(name, requestOf(invocation.val.request), io);
        return io.output(jsonResponse(answer.status, answer.body));
      }
      case 'move': {
        const m = invocation.val;
        if (m.move !== 'archive') throw new Error(`unknown move '${m.move}'`);
        io.unschedule(m.id, m.dueAt);
        archive(io, JSON.parse(m.data));
        return io.output(undefined);
      }
      case 'store': {
        if (invocation.val.name !== 'notes') throw new Error(`unknown store '${invocation.val.name}'`);
        return { response: jsonResponse(200, notesStore(io)), writes: [], events: [] };
      }
    }
    throw new Error(`unknown invocation '${invocation.tag}'`);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    // A failure keeps no writes: for a move, only the removal of its own schedule records.
    return { response: jsonResponse(500, errorBody(500, 'handler_error', message)), writes: [], events: [], thrown: { message } };
  }
}
