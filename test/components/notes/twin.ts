/**
 * The notes twin as a JavaScript twin (defineTwin), from the same notes.js as the component:
 * the bench runs one twin in three engines (trusted V8, QuickJS, WebAssembly component).
 */
import { defineTwin, type ReadTree, type TwinContext } from '../../../sdk/twin/index.js';
import { archive, errorBody, manifest, notesStore, route, type NotesIo } from './notes.js';

function ioOf(ctx: TwinContext): NotesIo {
  return {
    get: (type, id) => ctx.tree.get(type, id),
    list: (type, options) => ctx.tree.list(type, options),
    put: (type, id, value) => ctx.tree.put(type, id, value),
    schedule: (id, move, dueAt, data) => ctx.schedule(id, move, dueAt, data),
    emit: (type, data) => ctx.emit(type, data),
    id: (prefix) => ctx.id(prefix),
    nowMs: ctx.nowMs(),
    position: ctx.position,
  };
}

function readIo(tree: ReadTree): Pick<NotesIo, 'get' | 'list'> {
  return { get: (type, id) => tree.get(type, id), list: (type, options) => tree.list(type, options) };
}

export default defineTwin({
  vendor: manifest.vendor,
  version: manifest.version,
  protocol: 'http',
  models: manifest.models,
  routes: manifest.routes.map((r) => ({ name: r.name, match: r.match, handle: (request, ctx) => route(r.name, request, ioOf(ctx)) })),
  moves: { archive: (ctx, data) => archive(ioOf(ctx), data as { id: string }) },
  stores: { notes: (tree) => notesStore(readIo(tree)) },
  errorBody: (status, code, message) => errorBody(status, code, message),
});
