/**
 * The widget resource: create, retrieve, list (newest first, cursor pagination), update,
 * delete, and the timed move that activates a widget.
 *
 * State, as records in the twin's tree: `widget/<id>` → the widget as the vendor shows it.
 * Ids are made by `ctx.orderedId`, so id order is creation order: a list is one ordered read
 * of the tree, and a cursor is an id. Never keep state in module variables: it would not
 * survive a restart, a branch or a history cut; the tree is the twin's only memory.
 */
import type { Move, ReadTree, TwinContext, TwinResponse } from 'twinkit/twin';
import { InvalidRequest, handler, missing } from '../errors.js';
import { bodyParams, integer, text } from '../lib/params.js';

export interface Widget {
  id: string;
  object: 'widget';
  name: string;
  /** `pending` until `activate_in` seconds have passed on the world clock, then `active`. */
  status: 'pending' | 'active';
  /** Epoch seconds, from the world clock. */
  created: number;
  /** Epoch seconds when it became (or will become) active. */
  active_at: number;
}

export const WIDGET = 'widget';
const MAX_ACTIVATE_IN = 365 * 24 * 3600;

/**
 * A stored widget, checked for what the answers are made from: a record the twin did not write
 * (brought into the world from elsewhere) is a failure naming it, never an answer without its id.
 */
function load(tree: ReadTree, id: string): Widget | undefined {
  const w = tree.get<Widget>(WIDGET, id);
  if (w === undefined) return undefined;
  if (typeof w !== 'object' || w === null || w.id !== id || w.object !== 'widget') {
    throw new Error(`The kitvendor twin's record of type '${WIDGET}' and id '${id}' is malformed (not a widget with its id).`);
  }
  return w;
}

/** Activates `widget` in `seconds` on the world clock (now when 0). */
function scheduleActivation(ctx: TwinContext, widget: Widget, seconds: number): void {
  const dueMs = ctx.nowMs() + seconds * 1000;
  widget.active_at = Math.floor(dueMs / 1000);
  if (seconds === 0) {
    widget.status = 'active';
    ctx.cancel(widget.id);
    return;
  }
  widget.status = 'pending';
  // The same id again replaces the earlier schedule: an update moves the instant.
  ctx.schedule(widget.id, 'activate', new Date(dueMs).toISOString(), { id: widget.id });
}

export const createWidget = handler((request, ctx): TwinResponse => {
  const p = bodyParams(request, ['name', 'activate_in']);
  if (p['name'] === undefined) throw new InvalidRequest('parameter_missing', 'Missing required param: name.', 'name');
  const name = text(p['name'], 'name', 100);
  const activateIn = p['activate_in'] === undefined ? 0 : integer(p['activate_in'], 'activate_in', 0, MAX_ACTIVATE_IN);
  const widget: Widget = { id: ctx.orderedId('wgt_'), object: 'widget', name, status: 'active', created: Math.floor(ctx.nowMs() / 1000), active_at: 0 };
  scheduleActivation(ctx, widget, activateIn);
  ctx.tree.put(WIDGET, widget.id, widget);
  // Events ride on the entry this request makes (webhooks are driven from them).
  ctx.emit('widget.created', widget);
  return { body: widget };
});

export const retrieveWidget = handler((request, ctx): TwinResponse => {
  const id = request.params['id'] ?? '';
  const widget = load(ctx.tree, id);
  return widget ? { body: widget } : missing('widget', id);
});

export const listWidgets = handler((request, ctx): TwinResponse => {
  const limit = request.query['limit'] === undefined ? 10 : integer(request.query['limit'], 'limit', 1, 100);
  const after = request.query['starting_after'];
  if (after !== undefined && typeof after !== 'string') throw new InvalidRequest('parameter_invalid', 'starting_after must be one widget id.', 'starting_after');
  if (after !== undefined && load(ctx.tree, after) === undefined) return missing('widget', after, 'starting_after');
  // Newest first: ids sort in creation order, so walk them downward from the cursor.
  const page = ctx.tree.list<Widget>(WIDGET, { reverse: true, limit, ...(after !== undefined ? { before: after } : {}) });
  return { body: { object: 'list', url: '/v1/widgets', has_more: page.hasMore, data: page.items.map((item) => item.value) } };
});

export const updateWidget = handler((request, ctx): TwinResponse => {
  const id = request.params['id'] ?? '';
  const p = bodyParams(request, ['name', 'activate_in']);
  const widget = load(ctx.tree, id);
  if (!widget) return missing('widget', id);
  if (p['name'] !== undefined) widget.name = text(p['name'], 'name', 100);
  if (p['activate_in'] !== undefined) scheduleActivation(ctx, widget, integer(p['activate_in'], 'activate_in', 0, MAX_ACTIVATE_IN));
  ctx.tree.put(WIDGET, id, widget);
  return { body: widget };
});

export const deleteWidget = handler((request, ctx): TwinResponse => {
  const id = request.params['id'] ?? '';
  if (!load(ctx.tree, id)) return missing('widget', id);
  ctx.tree.delete(WIDGET, id);
  ctx.cancel(id);
  return { body: { id, object: 'widget', deleted: true } };
});

/**
 * The timed move: performed when the world clock passes the instant `scheduleActivation` set,
 * on the twin's next request, in an entry stamped at that instant.
 */
export const activateWidget: Move = (ctx, data) => {
  const id = (data as { id?: unknown } | null)?.id;
  if (typeof id !== 'string') return;
  const widget = load(ctx.tree, id);
  if (!widget || widget.status === 'active') return;
  widget.status = 'active';
  ctx.tree.put(WIDGET, id, widget);
  ctx.emit('widget.activated', widget);
};

/** Every widget, oldest first, read a page of 100 at a time (one host read a page). */
export function allWidgets(tree: ReadTree): Widget[] {
  const out: Widget[] = [];
  let after: string | undefined;
  for (;;) {
    const page = tree.list<Widget>(WIDGET, { limit: 100, ...(after !== undefined ? { after } : {}) });
    for (const item of page.items) out.push(item.value);
    if (!page.hasMore || page.items.length === 0) return out;
    after = page.items[page.items.length - 1]!.id;
  }
}
