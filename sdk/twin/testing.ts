/**
 * A test harness for a built twin bundle: runs it in a `node:vm` context with an in-memory
 * committed tree behind `__host_call`, applies each call's writes as one log entry, and
 * performs due timed moves before each request the way the world runner does. It proves a
 * twin (and the guest runtime) without the real sandbox or storage. Not a security boundary:
 * only for trusted bundles in tests.
 */
import vm from 'node:vm';
import type { EmittedEvent, RecordWrite } from '../../runtime/world/types.js';
import type { TwinManifestJson } from '../../runtime/runner/types.js';
import { compileRouter } from '../../runtime/router/index.js';
import type { NearMiss } from '../../runtime/router/index.js';
import { parseForm, parseQuery } from './form.js';
import { compareIds } from './guest/runtime.js';
import { readGuestOutput } from './protocol.js';
import type { GuestOutput } from './protocol.js';
import type { RootInfo, RootRead, TwinRequest } from './types.js';

/** What a harness call answers: the guest's output, plus where its entry went (if it made one). */
export interface HarnessResult extends GuestOutput {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  /** The log position of the entry this call made; undefined when it wrote nothing. */
  position?: number;
  /** `__host_call`s the guest made during the call. */
  hostCalls: number;
}

export interface HarnessEntry {
  position: number;
  occurredAt: string;
  cause: { kind: 'request'; route: string; method: string; path: string; status: number } | { kind: 'move'; move: string; dueAt: string } | { kind: 'refresh' } | { kind: 'ingest'; source: string };
  writes: RecordWrite[];
  events: EmittedEvent[];
  thrown?: { message: string };
}

export interface GuestHarnessOptions {
  world?: string;
  twin?: string;
  /** The world clock (epoch ms or ISO). Default 2026-01-01T00:00:00.000Z. */
  now?: number | string;
  /** Answer at most this many items per host `list`, as a host with a page cap would (default: no cap). */
  listCap?: number;
}

export interface RequestOptions {
  /** An object is sent as JSON; a string as a form body (`a[b]=1&…`), unless `contentType` says otherwise. */
  body?: unknown;
  headers?: Record<string, string>;
  contentType?: string;
  readOnly?: boolean;
}

export interface GuestHarness {
  readonly manifest: TwinManifestJson;
  /** The committed log, oldest first. */
  readonly log: HarnessEntry[];
  /** The head position (0 before the first entry). */
  readonly head: number;
  nowMs(): number;
  setNow(at: number | string): void;
  advance(ms: number): void;
  /** Calls one route directly (by name or index) with a request; no routing, no due moves. */
  invoke(route: string | number, request?: Partial<TwinRequest>): HarnessResult;
  /** Routes a request as the runner would (literal segments before parameters), after performing due moves. */
  request(method: string, target: string, options?: RequestOptions): HarnessResult;
  /** Performs every timed move due at or before now, each stamped at its due instant (or the latest entry's, if later). */
  runDue(): HarnessResult[];
  /** Reads a store (`GET /twin/store/<name>`). */
  store(name: string, query?: Record<string, string | string[]>): HarnessResult;
  /** A committed record, or undefined. */
  get(type: string, id: string): unknown;
  /** Committed records of a type in id order. */
  records(type: string): { id: string; value: unknown }[];
  /** Calls a global of the bundle directly (string in, string out). */
  call(fn: string, input: string): string;
  /**
   * Runs the twin's root refresh (`TwinRoot`) with `answer` standing for the vendor: each read
   * the twin asks for is answered by `answer(read)` (the path and query as the twin gave them)
   * and each `read` call's writes become one entry caused by the refresh. Answers the reads made,
   * in order. No markers and no sweep: that is the world runner's (runtime/runner/roots).
   */
  refresh(root: RootInfo, answer: (read: RootRead) => { status?: number; headers?: Record<string, string>; body: unknown }): RootRead[];
  /** Folds a webhook into the tree as `TwinRoot.ingest.event` does, unverified (the runner verifies). */
  ingest(root: RootInfo, webhook: { headers?: Record<string, string>; body: unknown }): HarnessResult;
}

const DEFAULT_NOW = Date.parse('2026-01-01T00:00:00.000Z');

function toMs(at: number | string): number {
  const ms = typeof at === 'number' ? at : Date.parse(at);
  if (!Number.isFinite(ms)) throw new TypeError(`not an instant: ${String(at)}`);
  return ms;
}

// ------------------------------------------------------------------ the harness

/** Loads a built twin bundle (`buildTwin(...).source`) into a fresh harness. */
export function createGuestHarness(source: string, options: GuestHarnessOptions = {}): GuestHarness {
  const committed = new Map<string, Map<string, string>>();
  const log: HarnessEntry[] = [];
  let now = toMs(options.now ?? DEFAULT_NOW);
  let hostCalls = 0;

  const typeMap = (type: string): Map<string, string> => {
    let m = committed.get(type);
    if (!m) committed.set(type, (m = new Map()));
    return m;
  };

  const hostCall = (op: string, argJson: string): string => {
    hostCalls++;
    const arg = JSON.parse(argJson) as { type: string; id?: string; after?: string; before?: string; limit?: number; reverse?: boolean };
    const records = committed.get(arg.type);
    if (op === 'get') return records?.get(arg.id ?? '') ?? 'null';
    if (op === 'count') return String(records?.size ?? 0);
    if (op === 'list') {
      const ids = [...(records?.keys() ?? [])]
        .filter((id) => (arg.after === undefined || compareIds(id, arg.after) > 0) && (arg.before === undefined || compareIds(id, arg.before) < 0))
        .sort(arg.reverse ? (a, b) => compareIds(b, a) : compareIds);
      const limit = Math.min(arg.limit ?? ids.length, options.listCap ?? Infinity);
      const page = ids.slice(0, limit);
      return `{"items":[${page.map((id) => `{"id":${JSON.stringify(id)},"value":${records!.get(id)!}}`).join(',')}],"hasMore":${ids.length > limit}}`;
    }
    throw new Error(`unknown host op '${op}'`);
  };

  const context = vm.createContext({ __host_call: hostCall });
  vm.runInContext(source, context, { filename: 'twin-bundle.js' });
  const call = (fn: string, input: string): string => {
    const f: unknown = vm.runInContext(`typeof ${fn} === 'function' ? ${fn} : undefined`, context);
    if (typeof f !== 'function') throw new Error(`the bundle defines no ${fn}()`);
    const out: unknown = f(input);
    if (typeof out !== 'string') throw new Error(`${fn}() answered a ${typeof out}, not a string`);
    return out;
  };
  const manifest = JSON.parse(call('__kit_manifest', '')) as TwinManifestJson;
  const world = options.world ?? 'test-world';
  const twin = options.twin ?? manifest.vendor;
  // The runner's own router, so a harness routes exactly as a world does.
  const router = compileRouter(manifest.routes.map((r, index) => ({ name: r.name, match: r.match, value: index })));

  const run = (input: Record<string, unknown>, at: number, cause: (status: number) => HarnessEntry['cause']): HarnessResult => {
    const before = hostCalls;
    const read = readGuestOutput(call('__kit_invoke', JSON.stringify({ ...input, world, twin, position: log.length + 1, nowMs: at })));
    if ('error' in read) throw new Error(`the bundle's __kit_invoke answered a malformed output: ${read.error}`);
    const out: GuestOutput = read.ok;
    const response = out.response ?? {};
    const result: HarnessResult = {
      ...out,
      status: response.status ?? 200,
      headers: response.headers ?? {},
      body: response.body,
      hostCalls: hostCalls - before,
    };
    if (out.writes.length > 0 || out.events.length > 0) {
      for (const w of out.writes) {
        if (w.value === null) typeMap(w.type).delete(w.id);
        else typeMap(w.type).set(w.id, JSON.stringify(w.value));
      }
      const entry: HarnessEntry = { position: log.length + 1, occurredAt: new Date(at).toISOString(), cause: cause(result.status), writes: out.writes, events: out.events };
      if (out.thrown) entry.thrown = { message: out.thrown.message };
      log.push(entry);
      result.position = entry.position;
    }
    return result;
  };

  const fullRequest = (partial: Partial<TwinRequest>): TwinRequest => ({
    method: 'GET',
    path: '/',
    params: {},
    query: {},
    headers: {},
    body: undefined,
    requestId: `req_${log.length + 1}`,
    readOnly: false,
    ...partial,
  });

  const invoke = (route: string | number, request: Partial<TwinRequest> = {}): HarnessResult => {
    const index = typeof route === 'number' ? route : manifest.routes.findIndex((r) => r.name === route);
    const found = manifest.routes[index];
    if (!found) throw new TypeError(`the twin has no route ${JSON.stringify(route)}`);
    const req = fullRequest(request);
    return run({ kind: 'route', index, request: req }, now, (status) => ({ kind: 'request', route: found.name, method: req.method, path: req.path, status }));
  };

  const runDue = (): HarnessResult[] => {
    const done: HarnessResult[] = [];
    for (let guard = 0; guard < 10_000; guard++) {
      const due = [...(committed.get('__due')?.entries() ?? [])].sort(([a], [b]) => compareIds(a, b))[0];
      if (!due) break;
      const record = JSON.parse(due[1]) as { id: string; move: string; dueAt: string; data: unknown };
      const dueMs = Date.parse(record.dueAt);
      if (dueMs > now) break;
      // Stamped at its instant, or at the latest entry when that is later: a log never goes back.
      const last = log[log.length - 1];
      const at = last ? Math.max(dueMs, Date.parse(last.occurredAt)) : dueMs;
      const result = run({ kind: 'move', move: record.move, id: record.id, data: record.data, dueAt: record.dueAt }, at, () => ({ kind: 'move', move: record.move, dueAt: record.dueAt }));
      // A move that leaves its own schedule behind would be performed forever.
      if (committed.get('__due')?.has(due[0]) && committed.get('__due')?.get(due[0]) === due[1]) {
        throw new Error(`the move ${record.move} (${record.id}) did not remove its own schedule`);
      }
      done.push(result);
    }
    return done;
  };

  const request = (method: string, target: string, options: RequestOptions = {}): HarnessResult => {
    runDue();
    const q = target.indexOf('?');
    const path = q === -1 ? target : target.slice(0, q);
    const headers: Record<string, string> = { ...options.headers };
    const req = fullRequest({ method: method.toUpperCase(), path, query: parseQuery(q === -1 ? '' : target.slice(q + 1)), headers, readOnly: options.readOnly ?? false });
    if (options.body !== undefined) {
      const type = options.contentType ?? (typeof options.body === 'string' ? 'application/x-www-form-urlencoded' : 'application/json');
      headers['content-type'] = type;
      const text = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
      req.bodyText = text;
      req.body = type.startsWith('application/json') ? JSON.parse(text) : type.startsWith('application/x-www-form-urlencoded') ? parseForm(text) : undefined;
    }
    const found = router.match(req);
    if (!found) {
      const miss: NearMiss | null = router.nearestMiss(req);
      return { status: 404, headers: {}, body: { error: { code: 'no_handler', message: `no route matches ${req.method} ${req.path}`, nearestMiss: miss } }, writes: [], events: [], hostCalls: 0 };
    }
    req.params = found.params;
    const name = manifest.routes[found.value]!.name;
    return run({ kind: 'route', index: found.value, request: req }, now, (status) => ({
      kind: 'request',
      route: name,
      method: req.method,
      path: req.path,
      status,
    }));
  };

  const refresh = (root: RootInfo, answer: (read: RootRead) => { status?: number; headers?: Record<string, string>; body: unknown }): RootRead[] => {
    const started = run({ kind: 'root.start', root }, now, () => ({ kind: 'refresh' }));
    if (started.thrown) throw new Error(`root.start threw: ${started.thrown.message}`);
    const queue = [...(started.body as RootRead[])];
    const made: RootRead[] = [];
    while (queue.length > 0) {
      if (made.length >= 100_000) throw new Error('the refresh asked for over 100,000 reads');
      const read = queue.shift()!;
      made.push(read);
      const a = answer(read);
      const bodyText = typeof a.body === 'string' ? a.body : JSON.stringify(a.body);
      const answered = { status: a.status ?? 200, headers: a.headers ?? { 'content-type': 'application/json' }, body: typeof a.body === 'string' ? undefined : a.body, bodyText };
      const result = run({ kind: 'root.read', root, read, answer: answered }, now, () => ({ kind: 'refresh' }));
      if (result.thrown) throw new Error(`root.read threw: ${result.thrown.message}`);
      queue.push(...(result.body as RootRead[]));
    }
    return made;
  };

  const ingest = (root: RootInfo, webhook: { headers?: Record<string, string>; body: unknown }): HarnessResult => {
    const bodyText = typeof webhook.body === 'string' ? webhook.body : JSON.stringify(webhook.body);
    const body = typeof webhook.body === 'string' ? JSON.parse(webhook.body) : webhook.body;
    return run({ kind: 'root.ingest', root, webhook: { headers: webhook.headers ?? {}, body, bodyText } }, now, () => ({ kind: 'ingest', source: 'test' }));
  };

  return {
    refresh,
    ingest,
    manifest,
    log,
    get head() {
      return log.length;
    },
    nowMs: () => now,
    setNow(at) {
      const ms = toMs(at);
      if (ms < now) throw new RangeError('the world clock does not move backward');
      now = ms;
    },
    advance(ms) {
      if (!(ms >= 0)) throw new RangeError('advance takes a non-negative number of ms');
      now += ms;
    },
    invoke,
    request,
    runDue,
    store: (name, query = {}) => run({ kind: 'store', name, query }, now, () => ({ kind: 'move', move: `store:${name}`, dueAt: '' })),
    get(type, id) {
      const json = committed.get(type)?.get(id);
      return json === undefined ? undefined : JSON.parse(json);
    },
    records(type) {
      return [...(committed.get(type)?.entries() ?? [])].sort(([a], [b]) => compareIds(a, b)).map(([id, json]) => ({ id, value: JSON.parse(json) as unknown }));
    },
    call,
  };
}
