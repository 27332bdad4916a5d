/**
 * The world engine's data model (see ../shared ARCHITECTURE "The data model").
 * Instants cross every public API as ISO 8601 strings (`2026-01-01T00:00:00.000Z`);
 * inside the store they are epoch milliseconds.
 */

/** One record write an entry made. `value: null` is a deletion. */
export interface RecordWrite {
  type: string;
  id: string;
  value: unknown | null;
}

/** What caused an entry. */
export type EntryCause =
  | {
      kind: 'request';
      method: string;
      /** The matched route pattern, e.g. `POST /v1/customers`, or the raw path when none matched. */
      route: string;
      path: string;
      status: number;
      requestId: string;
    }
  | { kind: 'move'; move: string; dueAt: string }
  | { kind: 'ingest'; source: string }
  | { kind: 'refresh' }
  /** A change of a changeset pushed into this world: the request that made it where it was cut. */
  | { kind: 'push'; changeset: string; change: number; method: string; route: string; path: string; status: number }
  /** What the world's origin had, brought in (`entries`: how many of its entries; `merged`: a three-way merge with this world's own). */
  | { kind: 'pull'; origin: string; through: number; merged: boolean }
  | { kind: 'system'; reason: string };

/** An event a twin emitted while making an entry (webhook deliveries are driven from these). */
export interface EmittedEvent {
  type: string;
  data: unknown;
}

/** What a caller hands to `append`. */
export interface EntryDraft {
  cause: EntryCause;
  writes: RecordWrite[];
  events?: EmittedEvent[];
  /** W3C traceparent of the request that caused the entry. */
  traceparent?: string;
  /**
   * Stamp the entry at this instant instead of the clock's now (timed moves catching up).
   * Must not be earlier than the twin's newest entry.
   */
  occurredAt?: string;
}

/** An entry as stored in a twin's log. */
export interface Entry {
  position: number;
  occurredAt: string;
  cause: EntryCause;
  writes: RecordWrite[];
  events?: EmittedEvent[];
  traceparent?: string;
}

export interface ClockState {
  /** ISO instant; when unset, the wall clock's now. */
  at: string;
  /** true when the clock is set (it moves only when set or advanced). */
  frozen: boolean;
}

export interface RecordListOptions {
  /** Return ids strictly after this one (ascending order) or before it (descending order). */
  after?: string;
  before?: string;
  limit?: number;
  /** Read as of this position (default: head). */
  at?: number;
}

export interface RecordPage<V = unknown> {
  records: { id: string; value: V }[];
  hasMore: boolean;
}

export interface TimelineQuery {
  limit?: number;
  before?: string;
  twin?: string;
  trace?: string;
}

export interface TimelinePage {
  entries: { twin: string; position: number; entry: Entry }[];
  next: string | null;
}

export interface HistoryCut {
  views: Record<string, { view: string; position: number }>;
}

export interface BranchOptions {
  /** ISO instant of the cut; now when absent. */
  at?: string;
  ttlSeconds?: number;
  live?: boolean;
  label?: string;
  /** The branch's name, where its host names it (the edge's `from`); else `<world>-<label>-<4 hex>`. */
  name?: string;
}

export interface BranchRecord {
  name: string;
  from: string;
  at: string;
  createdAt: string;
  expiresAt: string | null;
}

export interface WorldMap {
  twins: { twin: string; position: number; mirror: string | null; root: unknown | null; resources: { type: string; count: number }[] }[];
}

export interface DiffQuery {
  limit?: number;
  after?: string;
}

export interface WorldDiff {
  base: { id: string | null; at: string | null };
  changes: { twin: string; entry: Entry }[];
  next: string | null;
}
