/**
 * One Stripe request as a handler sees it (`Call`), and what the request wrapper (call.ts), the
 * events (events.ts), the store and the handlers all name. Imports only types, so every module of
 * lib/ can use it without importing the wrapper.
 */
import type { Tree, TwinContext, TwinRequest } from '../../../../sdk/twin/types.js';
import type { Params } from './params.js';
import type { Obj } from './util.js';

/** The API version the twin speaks: the one the installed `stripe` package pins. */
export const API_VERSION = '2026-10-28.endive';

/** A webhook endpoint of the account, as the request's events read it (events.ts). */
export interface Endpoint {
  id: string;
  url: string;
  events: string[];
}

export interface Call {
  req: TwinRequest;
  ctx: TwinContext;
  /** Buffered: applied only when the request succeeds. */
  tree: Tree;
  acct: string;
  p: Params;
  requestId: string;
  idempotencyKey: string | null;
  nowMs: number;
  /** Seconds, as Stripe timestamps are. */
  now: number;
  /** Events to record when the writes are applied. */
  emits: { type: string; data: unknown }[];
  /** True for the twin's own moves (a renewal falling due): events carry no request. */
  automatic?: boolean;
  /** Timed moves to schedule (or, with `move: ''`, to cancel) when the writes are applied, in order. */
  schedules: { id: string; move: string; dueAt: string; data?: unknown }[];
  /** The account's enabled webhook endpoints, once the request's first event has read them (events.ts). */
  endpoints: Endpoint[] | undefined;
}

/** Cancels a timed move when the request's writes are applied. */
export function cancelMove(c: Call, ...ids: string[]): void {
  for (const id of ids) c.schedules.push({ id, move: '', dueAt: '' });
}

export type Fn = (c: Call) => Obj;
