/**
 * The guest runtime: bundled into every twin's sandbox script, it turns the sandbox's two
 * string-in/string-out globals into the author-facing API (`TwinContext`, `Tree`).
 *
 * Protocol (the world runner is written against it):
 * - `__kit_manifest()` → the manifest JSON.
 * - `__kit_invoke(inputJson)` → `{ response?, writes, events, thrown? }` JSON, for a route, a
 *   timed move or a store.
 * - Reads go to the host through `__host_call(op, argJson)`: `get`, `list`, `count`.
 *
 * Runs inside QuickJS: no Node APIs, nothing but the language and `__host_call`.
 */
import { ORDERED_DIGITS, idSource } from '../../../runtime/world/ids.js';
import type { IdSource } from '../../../runtime/world/ids.js';
// Buffered writes and emitted events are kept as the host's copies and cross to it as values (see `__kit_invoke`).
import type { HostCopy } from '../copy.js';
import { SCENARIO_TYPE_PREFIX, SDK_TYPE_PREFIX } from '../reserved.js';
import type {
  ListOptions,
  ListPage,
  PutOptions,
  StreamConnection,
  Tree,
  TwinContext,
  TwinDefinition,
  TwinRequest,
  TwinResponse,
  IngestedWebhook,
  RootAnswer,
  RootInfo,
  RootRead,
  TwinRoot,
} from '../types.js';

type HostCall = (op: string, argJson: string) => string;

/** Offered by engines whose guests share the host's heap (trusted V8 contexts): reads as values, not JSON. */
type HostValue = (op: string, arg: Record<string, unknown>) => unknown;

/** A buffered write: a deletion, or the value as JSON text or as the host's copy (`__host_copy`). */
type Buffered =
  | { type: string; id: string; kind: 'deleted' }
  | { type: string; id: string; kind: 'text'; json: string }
  | { type: string; id: string; kind: 'copy'; value: unknown };

interface GuestGlobals {
  __host_call?: HostCall;
  __host_value?: HostValue;
  __host_copy?: HostCopy;
  __host_adopt?: HostCopy;
  __kit_manifest?: () => string;
  __kit_invoke?: (input: string | object) => string | ValueAnswer;
  __kit_error_body?: (input: string) => string;
  Date: DateConstructor;
  Math: Math;
}

/** The record type of scheduled moves: id `<dueAt ms, 15 digits>:<move id>`. */
export const DUE_TYPE = '__due';
/** Points from a move id to its `__due` record, so rescheduling replaces the old one. */
export const DUE_ID_TYPE = '__due_id';

/** The `__due` record id for a move due at `dueAtMs`. */
export function dueKey(dueAtMs: number, id: string): string {
  return `${String(dueAtMs).padStart(15, '0')}:${id}`;
}

// ---------------------------------------------------------------- id order

/**
 * Compares ids in UTF-8 byte order (= code point order), the order the store keeps them in.
 * Plain `<` compares UTF-16 code units, which puts U+E000..U+FFFF after astral characters.
 */
export function compareIds(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800) x = x <= 0xdfff ? x + 0x2000 : x - 0x800;
    if (y >= 0xd800) y = y <= 0xdfff ? y + 0x2000 : y - 0x800;
    return x - y;
  }
  return a.length - b.length;
}

// ---------------------------------------------------------------- the tree

interface HostPage {
  items: { id: string; value: unknown }[];
  hasMore: boolean;
}

function checkName(what: string, v: unknown): asserts v is string {
  if (typeof v !== 'string' || v === '') throw new TypeError(`${what} must be a non-empty string`);
}

/**
 * The tree a handler sees for one call: committed reads come from the host, writes are
 * buffered here (and merged into reads) until the call returns. Buffered values are kept as
 * JSON text (or, where the host offers `__host_copy`, as the host's copy) so a later mutation
 * of the object a handler passed in changes nothing, each read hands out a fresh copy, and
 * the output is assembled without a second serialisation.
 */
export class CallTree implements Tree {
  /** `type\0id` → buffered write, in first-write order. */
  private readonly buffer = new Map<string, Buffered>();
  /** type → id → committed JSON text (`null`: known absent). The committed tree does not change during a call. */
  private readonly committed = new Map<string, Map<string, string | null>>();
  private readonly counts = new Map<string, number>();
  hostCalls = 0;

  /** Value mode (`__host_value`): committed records come as fresh objects, one read per get. */
  private readonly exists = new Map<string, boolean>();

  constructor(
    private readonly hostCall: HostCall | undefined,
    private readonly readOnly: boolean,
    private readonly hostValue?: HostValue,
    private readonly hostCopy?: HostCopy,
    /** The host's copy for a value handed over (`put` with `handOver`), where it offers one. */
    private readonly hostAdopt?: HostCopy,
    /** A scenario's handlers (`installTwin(def, { scenario: true })`) may write `scenario.*` types; a twin's may not. */
    private readonly scenario = false,
  ) {}

  /** A fresh copy of a buffered write's value (undefined for a deletion). */
  private fresh(w: Buffered): unknown {
    if (w.kind === 'deleted') return undefined;
    return w.kind === 'copy' ? (this.hostCopy as HostCopy)(w.value) : JSON.parse(w.json);
  }

  private host(op: string, arg: unknown): string {
    const fn = this.hostCall;
    if (typeof fn !== 'function') throw new Error('the tree is not available here (no __host_call)');
    this.hostCalls++;
    const out = fn(op, JSON.stringify(arg));
    if (typeof out !== 'string') throw new Error(`__host_call('${op}') answered a ${typeof out}, not a string`);
    return out;
  }

  /** A read answered as a value: by `__host_value` where the engine offers it, else parsed from `__host_call`. */
  private read(op: string, arg: Record<string, unknown>): unknown {
    const fn = this.hostValue;
    if (typeof fn !== 'function') return JSON.parse(this.host(op, arg));
    this.hostCalls++;
    return fn(op, arg);
  }

  /** Whether the record exists in the committed tree. */
  private committedExists(type: string, id: string): boolean {
    if (typeof this.hostValue !== 'function') return this.committedJson(type, id) !== null;
    const key = `${type}\u0000${id}`;
    let known = this.exists.get(key);
    if (known === undefined) this.exists.set(key, (known = this.read('get', { type, id }) !== null));
    return known;
  }

  private committedOf(type: string): Map<string, string | null> {
    let m = this.committed.get(type);
    if (!m) this.committed.set(type, (m = new Map()));
    return m;
  }

  /** The committed record as JSON text, or null; one host call per record per call at most. */
  private committedJson(type: string, id: string): string | null {
    const known = this.committedOf(type);
    const hit = known.get(id);
    if (hit !== undefined) return hit;
    const raw = this.host('get', { type, id });
    const json = raw === 'null' ? null : raw;
    known.set(id, json);
    return json;
  }

  get<V = unknown>(type: string, id: string): V | undefined {
    checkName('tree.get: type', type);
    checkName('tree.get: id', id);
    const key = `${type}\u0000${id}`;
    const buffered = this.buffer.get(key);
    if (buffered === undefined && typeof this.hostValue === 'function') {
      // A fresh object per read from the host: the handler may change it freely.
      if (this.exists.get(key) === false) return undefined;
      const value = this.read('get', { type, id });
      this.exists.set(key, value !== null);
      return value === null ? undefined : (value as V);
    }
    if (buffered !== undefined) return this.fresh(buffered) as V | undefined;
    const json = this.committedJson(type, id);
    return json === null ? undefined : (JSON.parse(json) as V);
  }

  list<V = unknown>(type: string, options: ListOptions = {}): ListPage<V> {
    checkName('tree.list: type', type);
    if (typeof options !== 'object' || options === null) throw new TypeError('tree.list: options must be an object');
    const { after, before, limit, reverse } = options;
    if (after !== undefined && typeof after !== 'string') throw new TypeError('tree.list: after must be a string');
    if (before !== undefined && typeof before !== 'string') throw new TypeError('tree.list: before must be a string');
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) throw new TypeError('tree.list: limit must be a non-negative integer');
    const desc = reverse === true;
    const inRange = (id: string): boolean =>
      (after === undefined || compareIds(id, after) > 0) && (before === undefined || compareIds(id, before) < 0);

    // Buffered writes of this type inside the range: each can hide one committed item, so ask
    // the host for that many more than the limit and the page stays full.
    const pending = new Map<string, Buffered>();
    for (const w of this.buffer.values()) if (w.type === type && inRange(w.id)) pending.set(w.id, w);

    const ask = (from: string | undefined): HostPage => {
      const arg: Record<string, unknown> = { type };
      const lower = desc ? after : from ?? after;
      const upper = desc ? from ?? before : before;
      if (lower !== undefined) arg['after'] = lower;
      if (upper !== undefined) arg['before'] = upper;
      // Each buffered write can hide one committed item: ask for that many more (and at
      // least one, so a limit of 0 still learns whether anything is there).
      // The host answers at most 1,000 a page (more is refused); the loop below reads on.
      if (limit !== undefined) arg['limit'] = Math.min(HOST_PAGE_MAX, Math.max(limit, pending.size > 0 ? 1 : 0) + pending.size);
      if (desc) arg['reverse'] = true;
      const page = this.read('list', arg) as HostPage;
      if (!page || !Array.isArray(page.items)) throw new Error("__host_call('list') answered no items");
      // Listed items are not kept for later gets: writing each back to text cost more (~14% of
      // a Stripe list of ten) than the one host read a later get of the same record makes.
      return page;
    };

    let page = ask(undefined);
    if (pending.size === 0) return { items: page.items as { id: string; value: V }[], hasMore: page.hasMore === true };

    const merged: { id: string; value: unknown }[] = [];
    const beyond = (id: string, last: string): boolean => (desc ? compareIds(id, last) < 0 : compareIds(id, last) > 0);
    for (;;) {
      for (const item of page.items) if (!pending.has(item.id)) merged.push(item);
      if (page.hasMore !== true) break;
      const tail = page.items[page.items.length - 1];
      if (tail === undefined) throw new Error("__host_call('list') answered hasMore with no items");
      // Stop once more than `limit` items are known up to `last`: the page is full and more
      // follow. Otherwise the buffer may have hidden what the host had, so read on.
      if (limit !== undefined) {
        let upTo = merged.length;
        for (const [id, w] of pending) if (w.kind !== 'deleted' && !beyond(id, tail.id)) upTo++;
        if (upTo > limit) break;
      }
      page = ask(tail.id);
    }
    // Buffered records beyond the host's last id (when it stopped early) sort after more than
    // `limit` known items, so the cut below drops them: they belong on a later page.
    for (const [id, w] of pending) if (w.kind !== 'deleted') merged.push({ id, value: this.fresh(w) });
    merged.sort((a, b) => (desc ? compareIds(b.id, a.id) : compareIds(a.id, b.id)));
    // The loop ends either with the host done (then `merged` is the whole range) or with more
    // than `limit` items known: either way the cut says whether more follow.
    const cut = limit !== undefined && merged.length > limit;
    return { items: (cut ? merged.slice(0, limit) : merged) as { id: string; value: V }[], hasMore: cut };
  }

  count(type: string): number {
    checkName('tree.count: type', type);
    let n = this.counts.get(type);
    if (n === undefined) {
      n = this.read('count', { type }) as number;
      if (typeof n !== 'number') throw new Error("__host_call('count') answered no number");
      this.counts.set(type, n);
    }
    for (const w of this.buffer.values()) {
      if (w.type !== type) continue;
      const existed = this.committedExists(type, w.id);
      if (w.kind !== 'deleted' && !existed) n++;
      else if (w.kind === 'deleted' && existed) n--;
    }
    return n;
  }

  put(type: string, id: string, value: unknown, options?: PutOptions): void {
    this.checkWrite('put', type, id);
    this.checkReserved('put', type);
    this.write(type, id, value, options?.handOver === true);
  }

  delete(type: string, id: string): void {
    this.checkWrite('delete', type, id);
    this.checkReserved('delete', type);
    this.buffer.set(`${type}\u0000${id}`, { type, id, kind: 'deleted' });
  }

  /** Types an author's `put`/`delete` may not touch (sdk/twin/reserved.ts). */
  private checkReserved(op: string, type: string): void {
    if (type.startsWith(SDK_TYPE_PREFIX)) throw new TypeError(`tree.${op}: record types starting with '${SDK_TYPE_PREFIX}' belong to the SDK ('${type}')`);
    if (!this.scenario && type.startsWith(SCENARIO_TYPE_PREFIX)) {
      throw new TypeError(`tree.${op}: record types starting with '${SCENARIO_TYPE_PREFIX}' belong to the world's scenarios ('${type}'); a twin neither reads nor writes them`);
    }
  }

  /** The SDK's own writes (`__due`), past the reserved-type guard. */
  write(type: string, id: string, value: unknown, handOver = false): void {
    this.checkWrite('put', type, id);
    if (value === undefined || value === null) throw new TypeError(`tree.put: the value of ${type}/${id} is ${value}; use tree.delete to remove a record`);
    if (this.hostCopy !== undefined) {
      const copied = tryCopy((handOver ? this.hostAdopt : undefined) ?? this.hostCopy, value);
      if (copied !== FAILED) {
        if (copied === undefined) throw new TypeError(`tree.put: the value of ${type}/${id} is not JSON data`);
        this.buffer.set(`${type}\u0000${id}`, { type, id, kind: 'copy', value: copied });
        return;
      }
      // The copy refused it: JSON.stringify below says why, in its own words.
    }
    let json: string | undefined;
    try {
      json = JSON.stringify(value);
    } catch (e) {
      throw new TypeError(`tree.put: the value of ${type}/${id} is not JSON data (${e instanceof Error ? e.message : String(e)})`);
    }
    if (json === undefined) throw new TypeError(`tree.put: the value of ${type}/${id} is not JSON data`);
    this.buffer.set(`${type}\u0000${id}`, { type, id, kind: 'text', json });
  }

  remove(type: string, id: string): void {
    this.checkWrite('delete', type, id);
    this.buffer.set(`${type}\u0000${id}`, { type, id, kind: 'deleted' });
  }

  private checkWrite(op: string, type: string, id: string): void {
    if (this.readOnly) throw new TypeError(`tree.${op}: this tree is read-only`);
    checkName(`tree.${op}: type`, type);
    checkName(`tree.${op}: id`, id);
  }

  /** The buffered writes as a JSON array text, last value per record, in first-write order. */
  writesJson(): string {
    const parts: string[] = [];
    for (const w of this.buffer.values()) {
      const json = w.kind === 'deleted' ? 'null' : w.kind === 'copy' ? JSON.stringify(w.value) : w.json;
      parts.push(`{"type":${JSON.stringify(w.type)},"id":${JSON.stringify(w.id)},"value":${json}}`);
    }
    return `[${parts.join(',')}]`;
  }

  /** The buffered writes as values (host copies, or parsed text), in first-write order. */
  writesValue(): { type: string; id: string; value: unknown }[] {
    const out: { type: string; id: string; value: unknown }[] = [];
    for (const w of this.buffer.values()) {
      out.push({ type: w.type, id: w.id, value: w.kind === 'deleted' ? null : w.kind === 'copy' ? w.value : JSON.parse(w.json) });
    }
    return out;
  }
}

/** The most items the host's `list` answers in one page (runtime/world: `listRecords`). */
const HOST_PAGE_MAX = 1000;
const FAILED: unique symbol = Symbol('copy failed');

/** The host's copy of `value`, or FAILED when it threw (a cycle, a BigInt, a throwing toJSON). */
function tryCopy(copy: HostCopy, value: unknown): unknown {
  try {
    return copy(value);
  } catch {
    return FAILED;
  }
}

/**
 * `__kit_invoke`'s answer where the host offers `__host_copy`: the answer text with empty
 * `writes` and `events`, which cross as values beside it, and for a route or a store, the
 * response as a value (the text then holds none).
 */
interface ValueAnswer {
  answer: string;
  writes: { type: string; id: string; value: unknown }[];
  events: { type: string; data: unknown }[];
  /** A route's or store's response (the host's copy), whose JSON body, if any, is `body`. */
  response?: unknown;
  body?: string;
}

// ---------------------------------------------------------------- the clock

/**
 * A `Date` whose "now" is the world clock: `Date.now()`, `new Date()` and `Date()` agree;
 * `new Date(x)` and the statics work as usual, and instances are real Dates. Made once per
 * twin and pointed at each call's clock (`clock.nowMs`), which is cheaper than a new
 * constructor per call.
 */
function clockDate(RealDate: DateConstructor, clock: { nowMs: number }): DateConstructor {
  const KitDate = function (this: unknown, ...args: unknown[]): unknown {
    if (new.target === undefined) return new RealDate(clock.nowMs).toString();
    return Reflect.construct(RealDate, args.length === 0 ? [clock.nowMs] : args, new.target);
  } as unknown as DateConstructor & { prototype: Date };
  Object.defineProperty(KitDate, 'prototype', { value: RealDate.prototype, writable: false });
  Object.defineProperty(KitDate, 'name', { value: 'Date' });
  Object.defineProperty(KitDate, 'length', { value: 7 });
  KitDate.now = () => clock.nowMs;
  KitDate.parse = RealDate.parse;
  KitDate.UTC = RealDate.UTC;
  return KitDate;
}

// ---------------------------------------------------------------- invoke

interface InvokeBase {
  world: string;
  twin: string;
  position: number;
  nowMs: number;
}
type InvokeInput =
  | (InvokeBase & { kind: 'route'; index: number; request: TwinRequest })
  | (InvokeBase & { kind: 'move'; move: string; id: string; data: unknown; dueAt: string | number })
  | (InvokeBase & { kind: 'store'; name: string; query: Record<string, string | string[]> })
  | (InvokeBase & { kind: 'stream'; event: 'open' | 'data' | 'close'; connection: string; state: unknown; bytes?: string })
  | (InvokeBase & { kind: 'root.start'; root: RootInfo })
  | (InvokeBase & { kind: 'root.read'; root: RootInfo; read: RootRead; answer: RootAnswer })
  | (InvokeBase & { kind: 'root.ingest'; root: RootInfo; webhook: IngestedWebhook });

export interface Thrown {
  message: string;
  stack?: string;
}

/** A message for any thrown value, even one whose `toString` throws. */
export function describeThrown(e: unknown): Thrown {
  try {
    if (e instanceof Error) {
      const out: Thrown = { message: String(e.message) };
      if (typeof e.stack === 'string' && e.stack !== '') out.stack = e.stack;
      return out;
    }
    if (typeof e === 'string') return { message: e };
    return { message: `a non-Error value was thrown: ${String(e)}` };
  } catch {
    return { message: 'a value that cannot be described was thrown' };
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A declared function by name: own properties only, so `constructor` or `toString` is never one. */
function own<F>(table: Record<string, F>, name: unknown): F | undefined {
  if (typeof name !== 'string' || !Object.prototype.hasOwnProperty.call(table, name)) return undefined;
  const fn = table[name];
  return typeof fn === 'function' ? fn : undefined;
}

/**
 * A handler's response, checked (a failure here counts as the handler's), as `[meta, body]`:
 * the response without its body, and a body that is JSON data (not a string) as JSON text of
 * its own, which crosses after the answer (see `readGuestOutput`) or beside it, so that the
 * host can send it without parsing and writing it again. The meta crosses as JSON text, or as
 * the host's copy where it offers `__host_copy` (no text written here and parsed there).
 */
function responseParts(value: unknown, where: string): [meta: TwinResponse & { bodyFollows?: true }, body: string | undefined] {
  if (!isRecord(value)) throw new TypeError(`${where} returned ${value === null ? 'null' : typeof value}, not a response object`);
  if (typeof (value as { then?: unknown }).then === 'function') throw new TypeError(`${where} returned a Promise: handlers are synchronous`);
  const r = value as TwinResponse;
  const out: TwinResponse & { bodyFollows?: true } = { status: r.status ?? 200 };
  if (!Number.isInteger(out.status) || out.status! < 100 || out.status! > 599) throw new TypeError(`${where} returned status ${String(r.status)}, not an integer 100..599`);
  if (r.headers !== undefined) {
    if (!isRecord(r.headers)) throw new TypeError(`${where} returned headers that are not an object`);
    const headers: Record<string, string> = {};
    for (const [name, v] of Object.entries(r.headers)) {
      if (typeof v !== 'string' && typeof v !== 'number') throw new TypeError(`${where} returned header '${name}' that is not a string`);
      headers[name] = String(v);
    }
    out.headers = headers;
  }
  let body: string | undefined;
  if (r.bodyBase64 !== undefined) {
    if (typeof r.bodyBase64 !== 'string') throw new TypeError(`${where} returned bodyBase64 that is not a string`);
    out.bodyBase64 = r.bodyBase64;
  } else if (typeof r.body === 'string') {
    out.body = r.body;
  } else if (r.body !== undefined) {
    body = JSON.stringify(r.body);
    if (body === undefined) throw new TypeError(`${where} returned a response that is not JSON data`);
    out.bodyFollows = true;
  }
  return [out, body];
}

/** Bytes cross as binary strings: a character above U+00FF is no byte. */
const NOT_A_BYTE = /[^\u0000-\u00ff]/;

function binary(v: unknown, where: string, maxLength: number): string {
  if (typeof v !== 'string') throw new TypeError(`${where} must be a binary string (one character per byte)`);
  if (NOT_A_BYTE.test(v)) throw new TypeError(`${where} has a character above U+00FF: bytes are sent as a binary string (encode text as UTF-8 first)`);
  if (v.length > maxLength) throw new TypeError(`${where} is longer than ${maxLength} bytes`);
  return v;
}

/**
 * Runs a stream event and checks its answer (untrusted as any handler's). The answer goes out
 * as the response body: `{ send, close, state, until }`, with the state always present.
 */
function streamAnswerJson(def: TwinDefinition, input: { event: unknown; connection: unknown; state: unknown; bytes?: unknown }, ctx: TwinContext): string {
  const handler = def.stream;
  if (!handler) throw new TypeError(`__kit_invoke: twin '${def.vendor}' has no stream handler`);
  checkName('__kit_invoke: connection', input.connection);
  const conn: StreamConnection = { id: input.connection, state: input.state === undefined ? null : input.state };
  const where = `stream.${String(input.event)}`;
  let answer: unknown;
  if (input.event === 'open') answer = handler.open ? handler.open(ctx, conn) : undefined;
  else if (input.event === 'data') answer = handler.data(ctx, conn, binary(input.bytes ?? '', '__kit_invoke: bytes', Infinity));
  else if (input.event === 'close') answer = handler.close ? handler.close(ctx, conn) : undefined;
  else throw new TypeError(`__kit_invoke: unknown stream event ${JSON.stringify(input.event)}`);
  if (answer === undefined || answer === null) answer = {};
  if (!isRecord(answer)) throw new TypeError(`${where} returned ${typeof answer}, not a stream answer object`);
  if (typeof (answer as { then?: unknown }).then === 'function') throw new TypeError(`${where} returned a Promise: handlers are synchronous`);
  const out: Record<string, unknown> = {};
  if (answer['send'] !== undefined) out['send'] = binary(answer['send'], `${where}: send`, Infinity);
  if (answer['close'] !== undefined) {
    if (typeof answer['close'] !== 'boolean') throw new TypeError(`${where}: close must be a boolean`);
    out['close'] = answer['close'];
  }
  out['state'] = 'state' in answer && answer['state'] !== undefined ? answer['state'] : conn.state;
  const until = answer['until'];
  if (until !== undefined && until !== null) {
    if (!isRecord(until)) throw new TypeError(`${where}: until must be { delimiter, tail?, max? } or null`);
    const u: Record<string, unknown> = { delimiter: binary(until['delimiter'], `${where}: until.delimiter`, 64) };
    if ((u['delimiter'] as string).length === 0) throw new TypeError(`${where}: until.delimiter must not be empty`);
    if (until['tail'] !== undefined) u['tail'] = binary(until['tail'], `${where}: until.tail`, 64);
    if (until['max'] !== undefined) {
      if (!Number.isInteger(until['max']) || (until['max'] as number) < 1) throw new TypeError(`${where}: until.max must be a positive integer`);
      u['max'] = until['max'];
    }
    out['until'] = u;
  }
  const json = JSON.stringify({ status: 200, body: out });
  if (json === undefined) throw new TypeError(`${where} returned a state that is not JSON data`);
  return json;
}

function toIso(ms: number): string {
  return new Date(ms).toISOString();
}

function parseDue(dueAt: unknown, where: string): number {
  const ms = typeof dueAt === 'number' ? dueAt : typeof dueAt === 'string' ? Date.parse(dueAt) : NaN;
  if (!Number.isInteger(ms) || ms < 0 || ms > 999_999_999_999_999) throw new TypeError(`${where}: dueAt must be an ISO instant after 1970 (got ${JSON.stringify(dueAt)})`);
  return ms;
}

/** The manifest a bundle answers, with every optional field filled in. */
export function manifestOf(def: TwinDefinition): unknown {
  return {
    vendor: def.vendor,
    version: def.version,
    protocol: def.protocol,
    models: def.models,
    requestScopes: def.requestScopes ?? [],
    routes: def.routes.map((r) => ({ name: r.name, match: r.match })),
    stores: Object.keys(def.stores ?? {}),
    moves: Object.keys(def.moves ?? {}),
    scenarios: def.scenarios !== false,
    ...(def.stream ? { stream: true } : {}),
    ...(def.secrets ? { secrets: def.secrets } : {}),
    ...(def.root ? { root: { refresh: def.root.refresh ?? {}, ...(def.root.ingest ? { ingest: def.root.ingest.scheme } : {}) } } : {}),
  };
}

/** The reads a root's `start` or `read` answered, checked: the body of the call's response. */
function rootReads(value: unknown, where: string): RootRead[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new TypeError(`${where} must answer an array of reads (or nothing)`);
  return value.map((r: unknown, i) => {
    if (!isRecord(r) || typeof r['path'] !== 'string' || r['path'] === '') throw new TypeError(`${where}[${i}] is not a read { path, query?, headers?, data? }`);
    for (const part of ['query', 'headers'] as const) {
      const v = r[part];
      if (v !== undefined && (!isRecord(v) || !Object.values(v).every((x) => typeof x === 'string'))) throw new TypeError(`${where}[${i}].${part} must be an object of strings`);
    }
    return r as unknown as RootRead;
  });
}

function rootOf(def: TwinDefinition): TwinRoot {
  if (def.root === undefined) throw new TypeError('__kit_invoke: the twin declares no root');
  return def.root;
}

/**
 * Defines `__kit_manifest` and `__kit_invoke` for a twin. The twin build calls this from the
 * bundle's entry; twin authors never do. `scenario`: the definition holds a world's scenario
 * `js` handlers (`__kit_install_twin`), whose tree may write `scenario.*` types; the runner
 * refuses any other write of theirs (runtime/scenario/writes.ts).
 */
export function installTwin(def: TwinDefinition, options: { scenario?: boolean } = {}): void {
  const g = globalThis as unknown as GuestGlobals;
  const scenario = options.scenario === true;
  const manifest = JSON.stringify(manifestOf(def));
  const stores = def.stores ?? {};
  const moves = def.moves ?? {};

  g.__kit_manifest = () => manifest;
  // The twin's own error shape, for failures the runner sees rather than the guest (a handler
  // stopped by its step budget or its memory cap): input `{ status, code, message }`.
  g.__kit_error_body = (inputJson: string): string => {
    const { status, code, message } = JSON.parse(inputJson) as { status: number; code: string; message: string };
    const fallback = { error: { code, message } };
    if (!def.errorBody) return JSON.stringify(fallback);
    try {
      const body = JSON.stringify(def.errorBody(status, code, message));
      return body === undefined ? JSON.stringify(fallback) : body;
    } catch {
      return JSON.stringify(fallback);
    }
  };
  // Outside a call the clock reads 0, as QuickJS's own Date does (its instance is pinned to epoch 0).
  const clock = { nowMs: 0 };

  // The call in progress, which the context's functions act on. They are made once per twin,
  // not per call: ten closures per call cost ~4 µs of a ~25 µs call in the interpreter. A
  // nested `__kit_invoke` saves and restores it; the context object itself is still one per
  // call (its tree, world and twin).
  interface CallState {
    t: CallTree;
    /** JSON text each, or `{ type, data }` with the host's copy of the data where it offers `__host_copy`. */
    events: (string | { type: string; data: unknown })[];
    copy: HostCopy | undefined;
    nowMs: number;
    world: string;
    twin: string;
    position: number;
    /** Seeded on first use (a string hash run by the interpreter): a call that draws no id does not pay for it. */
    ids: IdSource | undefined;
  }
  let call: CallState | undefined;
  const active = (): CallState => {
    if (call === undefined) throw new TypeError('the twin context is used outside a call');
    return call;
  };
  const idsOf = (c: CallState): IdSource => (c.ids ??= idSource(c.world, c.twin, c.position));
  const shared = {
    now: (): string => toIso(active().nowMs),
    nowMs: (): number => active().nowMs,
    id: (prefix: string, length?: number): string => {
      if (typeof prefix !== 'string') throw new TypeError('ctx.id: prefix must be a string');
      if (length !== undefined && (!Number.isInteger(length) || length < 1 || length > 128)) throw new TypeError('ctx.id: length must be an integer 1..128');
      return idsOf(active()).id(prefix, length);
    },
    orderedId: (prefix: string, length?: number): string => {
      if (typeof prefix !== 'string') throw new TypeError('ctx.orderedId: prefix must be a string');
      if (length !== undefined && (!Number.isInteger(length) || length < ORDERED_DIGITS || length > 128)) {
        throw new TypeError(`ctx.orderedId: length must be an integer ${ORDERED_DIGITS}..128`);
      }
      return idsOf(active()).orderedId(prefix, length);
    },
    random: (): number => idsOf(active()).random(),
    emit: (type: string, data: unknown): void => {
      checkName('ctx.emit: type', type);
      const c = active();
      if (c.copy !== undefined) {
        const copied = data === undefined ? null : tryCopy(c.copy, data);
        if (copied !== FAILED) {
          if (copied === undefined) throw new TypeError(`ctx.emit: the data of '${type}' is not JSON data`);
          c.events.push({ type, data: copied });
          return;
        }
      }
      const json = data === undefined ? 'null' : JSON.stringify(data);
      if (json === undefined) throw new TypeError(`ctx.emit: the data of '${type}' is not JSON data`);
      c.events.push(`{"type":${JSON.stringify(type)},"data":${json}}`);
    },
    schedule: (id: string, move: string, dueAt: string, data?: unknown): void => {
      const t = active().t;
      checkName('ctx.schedule: id', id);
      if (!own(moves, move)) throw new TypeError(`ctx.schedule: the twin has no move '${String(move)}'`);
      const ms = parseDue(dueAt, 'ctx.schedule');
      const key = dueKey(ms, id);
      const old = t.get<{ key?: unknown }>(DUE_ID_TYPE, id);
      if (old && typeof old.key === 'string' && old.key !== key) t.remove(DUE_TYPE, old.key);
      t.write(DUE_TYPE, key, { id, move, dueAt: toIso(ms), data: data === undefined ? null : data });
      t.write(DUE_ID_TYPE, id, { key });
    },
    cancel: (id: string): void => {
      const t = active().t;
      checkName('ctx.cancel: id', id);
      const old = t.get<{ key?: unknown }>(DUE_ID_TYPE, id);
      if (!old) return;
      if (typeof old.key === 'string') t.remove(DUE_TYPE, old.key);
      t.remove(DUE_ID_TYPE, id);
    },
  };

  // The world's Date and Math.random are installed once, on the first call, and stay, pointed
  // at the call in progress: putting them in and taking them out around every call changed the
  // shapes of `Math` and of the global object each time (this, with the Stripe twin remembering
  // each key's account, took an in-process Stripe GET in V8 from 34–39 to 26 µs). Between calls
  // they behave as the sandbox's own: the clock reads 0 and Math.random is the prelude's generator.
  let installed = false;
  const install = (): void => {
    installed = true;
    const sandboxRandom = g.Math.random;
    g.Date = clockDate(g.Date, clock);
    g.Math.random = () => (call === undefined ? sandboxRandom() : idsOf(call).random());
  };

  // The input is JSON text, or (from an engine that shares the host's heap) the object itself.
  g.__kit_invoke = (inputJson: string | object): string | ValueAnswer => {
    const outer = call;
    const events: CallState['events'] = [];
    let dueWrites: CallTree | undefined;
    try {
      const input = (typeof inputJson === 'string' ? JSON.parse(inputJson) : inputJson) as InvokeInput;
      if (!isRecord(input)) throw new TypeError('__kit_invoke: the input is not an object');
      const { world, twin, position, nowMs } = input;
      if (typeof world !== 'string' || typeof twin !== 'string') throw new TypeError('__kit_invoke: world and twin must be strings');
      if (!Number.isInteger(position) || position < 1) throw new TypeError('__kit_invoke: position must be a positive integer');
      if (typeof nowMs !== 'number' || !Number.isFinite(nowMs)) throw new TypeError('__kit_invoke: nowMs must be a number');
      const hostCall = g.__host_call;
      const hostValue = g.__host_value;
      // Writes and events cross as values only where reads do: an engine sharing the host's heap.
      const copy = typeof hostValue === 'function' && typeof g.__host_copy === 'function' ? g.__host_copy : undefined;
      const adopt = copy !== undefined && typeof g.__host_adopt === 'function' ? g.__host_adopt : undefined;
      const t = new CallTree(hostCall, input.kind === 'store', hostValue, copy, adopt, scenario);

      // The world's clock and generator, for exactly this call.
      if (!installed) install();
      clock.nowMs = nowMs;

      call = { t, events, copy, nowMs, world, twin, position, ids: undefined };
      const ctx: TwinContext = {
        tree: t,
        world,
        twin,
        position,
        now: shared.now,
        nowMs: shared.nowMs,
        id: shared.id,
        orderedId: shared.orderedId,
        random: shared.random,
        emit: shared.emit,
        schedule: shared.schedule,
        cancel: shared.cancel,
      };

      // The response as JSON text, or as parts: the meta object and the body's JSON text.
      let response: string | undefined;
      let parts: ReturnType<typeof responseParts> | undefined;
      // A route's answer may keep none of the call's writes and events (an error answered, not thrown).
      let discard = false;
      if (input.kind === 'route') {
        const route = Number.isInteger(input.index) ? def.routes[input.index] : undefined;
        if (!route) throw new TypeError(`__kit_invoke: no route at index ${String(input.index)}`);
        const answered = route.handle(input.request, ctx);
        parts = responseParts(answered, `route '${route.name}'`);
        discard = (answered as TwinResponse).discardWrites === true;
      } else if (input.kind === 'move') {
        const move = own(moves, input.move);
        if (!move) throw new TypeError(`__kit_invoke: the twin has no move '${String(input.move)}'`);
        checkName('__kit_invoke: move id', input.id);
        const ms = parseDue(input.dueAt, `move '${input.move}'`);
        // The move's own schedule goes with it (a move that reschedules itself overwrites
        // this). Kept apart so a throwing move still leaves its schedule, and the runner
        // does not perform it again forever.
        const key = dueKey(ms, input.id);
        dueWrites = new CallTree(hostCall, false, hostValue, copy, adopt);
        dueWrites.remove(DUE_TYPE, key);
        t.remove(DUE_TYPE, key);
        const pointer = t.get<{ key?: unknown }>(DUE_ID_TYPE, input.id);
        if (pointer && pointer.key === key) {
          dueWrites.remove(DUE_ID_TYPE, input.id);
          t.remove(DUE_ID_TYPE, input.id);
        }
        move(ctx, input.data, toIso(ms));
        response = '{"status":200}';
      } else if (input.kind === 'store') {
        const store = own(stores, input.name);
        if (!store) throw new TypeError(`__kit_invoke: the twin has no store '${String(input.name)}'`);
        const answer = store(t, isRecord(input.query) ? (input.query as Record<string, string | string[]>) : {});
        parts = responseParts({ status: 200, body: answer === undefined ? null : answer }, `store '${input.name}'`);
      } else if (input.kind === 'stream') {
        response = streamAnswerJson(def, input, ctx);
      } else if (input.kind === 'root.start') {
        const reads = rootReads(rootOf(def).start(input.root), 'root.start');
        parts = responseParts({ status: 200, body: reads }, 'root.start');
      } else if (input.kind === 'root.read') {
        const next = rootReads(rootOf(def).read(input.read, input.answer, ctx, input.root), 'root.read');
        if (events.length > 0) throw new TypeError('root.read: a refresh emits no events (ctx.emit)');
        parts = responseParts({ status: 200, body: next }, 'root.read');
      } else if (input.kind === 'root.ingest') {
        const ingest = rootOf(def).ingest;
        if (ingest === undefined) throw new TypeError('__kit_invoke: the twin takes no webhook ingest');
        ingest.event(input.webhook, ctx, input.root);
        if (events.length > 0) throw new TypeError('root.ingest.event: an ingest emits no events (ctx.emit)');
        response = '{"status":200}';
      } else {
        throw new TypeError(`__kit_invoke: unknown kind ${JSON.stringify((input as { kind?: unknown }).kind)}`);
      }
      if (copy !== undefined) {
        const value: ValueAnswer = {
          answer: parts === undefined ? `{"response":${response as string},"writes":[],"events":[]}` : '{"writes":[],"events":[]}',
          writes: discard ? [] : t.writesValue(),
          events: discard ? [] : events.map((e) => (typeof e === 'string' ? (JSON.parse(e) as { type: string; data: unknown }) : e)),
        };
        if (parts !== undefined) {
          // Made above of checked strings and numbers: the copy cannot fail.
          value.response = copy(parts[0]);
          if (parts[1] !== undefined) value.body = parts[1];
        }
        return value;
      }
      let body: string | undefined;
      if (parts !== undefined) {
        response = JSON.stringify(parts[0]);
        body = parts[1];
      }
      // JSON text has no raw newline: the first one ends the answer and starts the body.
      const answer = discard ? `{"response":${response as string},"writes":[],"events":[]}` : `{"response":${response as string},"writes":${t.writesJson()},"events":[${events.join(',')}]}`;
      return body === undefined ? answer : `${answer}\n${body}`;
    } catch (e) {
      const thrown = describeThrown(e);
      let body: unknown = { error: { code: 'handler_error', message: thrown.message } };
      if (def.errorBody) {
        try {
          const custom = def.errorBody(500, 'handler_error', thrown.message);
          if (JSON.stringify(custom) !== undefined) body = custom;
        } catch {
          // The twin's own error shape failed too; the generic body stands.
        }
      }
      const writes = dueWrites ? dueWrites.writesJson() : '[]';
      return `{"response":${JSON.stringify({ status: 500, body })},"writes":${writes},"events":[],"thrown":${JSON.stringify(thrown)}}`;
    } finally {
      call = outer;
      clock.nowMs = outer === undefined ? 0 : outer.nowMs;
    }
  };
}
