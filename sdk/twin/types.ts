/**
 * What a twin author writes against. This file is type-checked without Node types
 * (tsconfig.sandbox.json): twin code runs inside QuickJS and sees only this API.
 */

export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

/** A plain request as a handler sees it. */
export interface TwinRequest {
  /** Upper case. */
  method: string;
  /** The vendor path, from the first `/` after `{world_url}/<vendor>`, without the query. */
  path: string;
  /** Path parameters from the matched pattern (`/v1/customers/:id` → `{ id }`), URL-decoded. */
  params: Record<string, string>;
  /** Query parameters; a repeated name gives an array. Bracket names stay as written (`expand[]`). */
  query: Record<string, string | string[]>;
  /**
   * Header names in lower case. The host adds its own, which a client cannot send:
   * `x-kit-twin-url`, where the client addressed this twin (`http://127.0.0.1:4440/local/shop/github`,
   * or the vendor's origin through the world's proxy, `https://api.github.com`), for the
   * absolute links a vendor writes; `x-kit-auth: authorization` when the world's token came
   * as the vendor's API key; `x-kit-read-only: 1` (see `readOnly`).
   */
  headers: Record<string, string>;
  /**
   * The body: parsed JSON for `application/json`, nested objects and arrays for
   * `application/x-www-form-urlencoded` (bracket syntax: `a[b]=1`, `a[]=1`, `a[0][c]=2`),
   * otherwise undefined. A JSON or form body that is not UTF-8 never reaches the twin: the
   * runner answers it 400.
   */
  body: unknown;
  /** The body as UTF-8 text, when there is one. */
  bodyText?: string;
  /** The body's bytes, base64, when it is not text (e.g. git packs). */
  bodyBase64?: string;
  /** The world's request id for this request (also the `requestId` of the entry's cause). */
  requestId: string;
  /** true when a read-scoped credential sent it to a twin whose manifest has `requestScopes: ['read']`. */
  readOnly: boolean;
}

export interface TwinResponse {
  status?: number;
  headers?: Record<string, string>;
  /** A string or bytes-as-base64 (`bodyBase64`) goes out as is; anything else as JSON. */
  body?: unknown;
  bodyBase64?: string;
  /**
   * Answer this, but keep none of the call's writes and events: a route that answers an
   * error (rather than throwing, which answers 500) leaves no trace of what it wrote first.
   */
  discardWrites?: boolean;
}

export interface ListOptions {
  /** Ids strictly after this one (ascending) — a cursor. */
  after?: string;
  /** Ids strictly before this one. With `reverse`, walks downward from it. */
  before?: string;
  limit?: number;
  /** Descending id order. */
  reverse?: boolean;
}

export interface ListPage<V> {
  items: { id: string; value: V }[];
  hasMore: boolean;
}

/**
 * The twin's state: records `(type, id) → value`. Reads see the handler's own earlier writes.
 * A type is at most 256 bytes of UTF-8 and an id at most 1,024, neither empty; neither holds a
 * lone surrogate, and one of 63 or more UTF-16 units no U+0000–U+0004 (`storableId`;
 * `toStorableId` files outside input under such ids). The world refuses others, and the call
 * that writes one fails.
 */
export interface ReadTree {
  get<V = unknown>(type: string, id: string): V | undefined;
  list<V = unknown>(type: string, options?: ListOptions): ListPage<V>;
  count(type: string): number;
}

export interface PutOptions {
  /**
   * The caller hands `value` over: neither it nor anything in it changes after this call.
   * What is stored is the same either way; a host that shares the twin's heap (a built-in
   * twin) may then keep the objects in it that `copyJson` made as they are, where `put`
   * otherwise copies them again. A twin that changes the value afterwards may find the change
   * stored.
   */
  handOver?: boolean;
}

export interface Tree extends ReadTree {
  /** Stores a copy of `value` (JSON data), as the value is now: changing it afterwards changes nothing. */
  put(type: string, id: string, value: unknown, options?: PutOptions): void;
  delete(type: string, id: string): void;
}

export interface TwinContext {
  tree: Tree;
  /** The world clock's now, ISO 8601. `Date.now()` inside the sandbox reads the same clock. */
  now(): string;
  /** The world clock's now, epoch milliseconds. */
  nowMs(): number;
  /** A deterministic id, seeded by (world, twin, position): `id('cus_')` → `cus_…`. */
  id(prefix: string, length?: number): string;
  /**
   * A deterministic id that sorts after every one made before: `orderedId('msg_')` →
   * `msg_` + the entry's position (7 base-62 digits) + its number in the entry (3) + random
   * characters, `length` (default 14, at least 10) after the prefix. Key records made in
   * volume by it: new ones then share storage pages (a durable create was a quarter cheaper for
   * the hello twin), and listing them in id order is creation order.
   */
  orderedId(prefix: string, length?: number): string;
  /** A deterministic number in [0, 1). `Math.random` is the same generator. */
  random(): number;
  /**
   * Records an event on the entry this request makes. One type is acted on by the world:
   * `webhook.delivery` with data `{ id?, url, method?, headers, body: string, sign? }` is sent
   * once the entry is durable, outside the request, retried with backoff and with the
   * request's trace continued; `sign: { scheme: 'stripe', secret }` adds a `Stripe-Signature`
   * made at send time. Each attempt's outcome comes back to the twin's `webhook.result` move
   * (data: `{ id, url, attempt, status, ok, error, durationMs, willRetry, nextAttemptAt }`)
   * when it declares one.
   */
  emit(type: string, data: unknown): void;
  /**
   * Schedules a timed move. When the world clock passes `dueAt`, the twin performs
   * `moves[move](ctx, data)` in an entry stamped at `dueAt`. Scheduling the same `id`
   * again replaces it; `cancel(id)` removes it.
   */
  schedule(id: string, move: string, dueAt: string, data?: unknown): void;
  cancel(id: string): void;
  world: string;
  twin: string;
  /**
   * The log position of the entry this call makes: the twin's head + 1. Positions only grow,
   * so a later entry's is always larger (a twin can number what it makes from it without
   * storing a counter). A call that writes and emits nothing makes no entry, and the next
   * call sees the same position.
   */
  position: number;
}

/** A matcher: every given part must hold. */
export interface Matcher {
  method?: string | string[];
  /** A pattern: literal segments, `:name` parameters, a trailing `*rest` for the remainder. */
  path: string;
  /** Each named query parameter must equal the value, or be present when `true`. */
  query?: Record<string, string | true>;
  /** Each named header (lower case) must equal the value, or be present when `true`. */
  headers?: Record<string, string | true>;
  /** Each dotted body path (`card.number`) must equal the value, or be present when `true`. */
  body?: Record<string, unknown>;
}

export type Handler = (request: TwinRequest, ctx: TwinContext) => TwinResponse;

export interface Route {
  /** A stable name for reports and coverage tables, e.g. `customers.create`. */
  name: string;
  match: Matcher;
  handle: Handler;
}

export type Move = (ctx: TwinContext, data: unknown, dueAt: string) => void;

export type Store = (tree: ReadTree, query: Record<string, string | string[]>) => unknown;

/**
 * One TCP connection of a stream twin (a twin whose clients speak a TCP protocol, reached
 * through `{world_api}/streams/<vendor>`). The guest keeps nothing between calls: what the
 * twin must remember about a connection lives in `state`, which the host hands in and takes
 * back on every call (so a restarted world loses only its live connections).
 */
export interface StreamConnection<S = unknown> {
  /** The host's id for the connection, stable for its life. */
  id: string;
  /** The twin's own JSON state for this connection: null on `open`. Mutate it, or answer a new `state`. */
  state: S | null;
}

/**
 * When to call `data` next: the host keeps what arrives and calls once the bytes it holds,
 * read after `tail`, contain `delimiter`, or once it holds `max` bytes. A line protocol waits
 * for `'\r\n'`; SMTP's DATA for `'\r\n.\r\n'` with `tail: '\r\n'`, so a message costs one call.
 * Binary strings, as `StreamAnswer.send`.
 */
export interface StreamUntil {
  /** 1 to 64 bytes. */
  delimiter: string;
  /** The bytes the twin already took that come just before the next ones (up to 64), so a delimiter split across calls is seen. */
  tail?: string;
  /** Call anyway once this many bytes wait (default and cap: the host's stream buffer, 16 MiB). */
  max?: number;
}

/** What a stream handler answers. Every part is optional; `undefined` sends nothing and keeps the state. */
export interface StreamAnswer<S = unknown> {
  /** Bytes to send, as a binary string: one character per byte, codes 0..255 (`'250 OK\r\n'`). */
  send?: string;
  /** Closes the connection after `send`. */
  close?: boolean;
  /** The connection's state from now on (JSON data). Absent: `conn.state` as the handler left it. */
  state?: S | null;
  /** Framing hint for the next `data` call; null (or absent) calls on every arrival. */
  until?: StreamUntil | null;
}

/**
 * The stream side of a twin. Each call runs like a route's handler: `ctx.tree` reads and
 * writes the twin's state, and what a call writes is committed as one log entry before its
 * answer is sent (a delivered message is on disk before the client hears `250`).
 */
export interface StreamHandler<S = unknown> {
  /** A client connected: the greeting, for protocols where the server speaks first. */
  open?(ctx: TwinContext, conn: StreamConnection<S>): StreamAnswer<S> | void;
  /** Bytes arrived (a binary string, one character per byte); see `StreamUntil` for framing. */
  data(ctx: TwinContext, conn: StreamConnection<S>, bytes: string): StreamAnswer<S> | void;
  /** The client went away (its answer's `send` goes nowhere; writes are still committed). */
  close?(ctx: TwinContext, conn: StreamConnection<S>): StreamAnswer<S> | void;
}

export interface TwinDefinition {
  vendor: string;
  version: string;
  /** `http`, or a TCP protocol reached through a stream (`smtp`, `mysql`). */
  protocol: string;
  models: {
    /** Hosts of the vendor this twin answers for, e.g. `api.stripe.com`. */
    hosts: string[];
    /** Resource types it keeps. */
    resources: string[];
    /** Environment variables a client reads for its base URL, e.g. `GITHUB_API_URL`. */
    endpointEnv?: string[];
  };
  requestScopes?: 'read'[];
  routes: Route[];
  stores?: Record<string, Store>;
  moves?: Record<string, Move>;
  /** The vendor's error body for a failure of the twin itself (a throwing handler). */
  errorBody?: (status: number, code: string, message: string) => unknown;
  /** Whether a scenario (handlers document) may be installed on this twin. Default true. */
  scenarios?: boolean;
  /**
   * Secrets kept in records (a webhook's signing secret), hidden from a caller that may only
   * read wherever the world shows records (log, timeline, diff, checkpoint): a record type whose
   * whole value is secret (`{ webhook_secret: true }`) or dotted paths of fields in its values
   * (`{ hook: ['config.secret'] }`). A webhook delivery's signing secret is always hidden.
   */
  secrets?: Record<string, true | string[]>;
  /** The TCP side of a twin whose `protocol` is not `http` (SMTP, MySQL): see `StreamHandler`. */
  stream?: StreamHandler;
  /** How the twin keeps a copy of a real vendor account (its root): see `TwinRoot`. */
  root?: TwinRoot;
}

/**
 * One read of the vendor a refresh makes. The host performs it against the world's root for
 * this twin, adds the sealed credential itself (the twin never sees it) and hands the answer
 * to `TwinRoot.read`.
 */
export interface RootRead {
  /** A path below the root's URL (`/v1/customers`, `/issues`), or an absolute URL on the root's own origin (a `Link` header's next page). */
  path: string;
  /** Query parameters, added to any the path carries. */
  query?: Record<string, string>;
  /** Extra request headers (`accept`); the credential's headers replace same-named ones. */
  headers?: Record<string, string>;
  /** The twin's own note, handed back with the answer (which list, which page): JSON data. */
  data?: unknown;
}

/** The vendor's answer to a `RootRead`. */
export interface RootAnswer {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** Parsed JSON when the answer is JSON, else undefined. */
  body: unknown;
  /** The body as text. */
  bodyText: string;
}

/** Where the twin's root is, as the world's `…/twins/<vendor>/root` names it. */
export interface RootInfo {
  /** The root's URL, e.g. `https://api.stripe.com` or `https://api.github.com/repos/octo/hello`. */
  url: string;
}

/** A vendor webhook the host verified with the sealed signing secret, as `TwinRoot.ingest.event` is given it. */
export interface IngestedWebhook {
  /** Lower-case names. */
  headers: Record<string, string>;
  /** Parsed JSON. */
  body: unknown;
  bodyText: string;
}

/**
 * A twin's copy of a real vendor account. A refresh calls `start`, performs each read it names
 * (through the host, with the sealed credential), and calls `read` with each answer; `read`
 * writes the records the answer shows with `ctx.tree.put` and answers the reads that follow
 * (the next page). Each `read` call becomes one log entry caused by the refresh. The host keeps,
 * beside each record a refresh or an ingest wrote, the hash of what the root said: a record
 * the root has not changed since it was last seen keeps the world's own edits; a record the
 * root no longer shows (not written by any `read` of a complete refresh) is deleted.
 * `ctx.emit` is refused in these calls: a refresh sends no webhooks.
 */
export interface TwinRoot {
  /**
   * Defaults for the root's `refresh`: `atMost`, the least time between two manual refreshes
   * (`'30s'`, `'5m'`); `every`, the schedule where the host keeps one. Durations: an integer
   * and `s`, `m`, `h` or `d`.
   */
  refresh?: { atMost?: string; every?: string };
  /** The first reads of a refresh. */
  start(root: RootInfo): RootRead[];
  /** One read's answer: write what it shows into `ctx.tree`; answer the reads that follow, if any. Throwing fails the refresh. */
  read(read: RootRead, answer: RootAnswer, ctx: TwinContext, root: RootInfo): RootRead[] | void;
  /**
   * Webhook ingest (`POST …/twins/<vendor>/ingest`): `scheme` names how the vendor signs
   * (`stripe`: `Stripe-Signature`, five minutes' tolerance; `github`: `X-Hub-Signature-256`);
   * the host verifies it with the sealed `signingSecret` and refuses a replay before `event` is
   * called. `event` writes what the webhook shows into `ctx.tree`.
   */
  ingest?: { scheme: 'stripe' | 'github'; event(webhook: IngestedWebhook, ctx: TwinContext, root: RootInfo): void };
}
