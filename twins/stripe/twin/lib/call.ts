/**
 * The wrapper every route goes through: authentication, parameters, idempotency, the
 * all-or-nothing write buffer, `expand`, and Stripe's headers (`Request-Id`, `Stripe-Version`,
 * `Idempotent-Replayed`). The request as a handler sees it (`Call`) is in request.ts.
 */
import type { Route, Tree, TwinContext, TwinRequest, TwinResponse } from '../../../../sdk/twin/types.js';
import { authenticate, copiedAccount } from './auth.js';
import { StripeError, invalid, malformedRecord } from '../errors.js';
import { applyExpand } from './expand.js';
import { API_VERSION, type Call, type Fn } from './request.js';
import { Params, checkStringLengths, foldBrackets, parseForm, toArrays } from './params.js';
import { TxTree } from './tx.js';
import { KNOWN_PARAMS } from './known-params.js';
import { canonical, clone, hash62, isObj, seconds, type Obj } from './util.js';

// Builtins as module bindings: a global lookup is slow in a node:vm context (see util.ts).
const { JSON, Math, Number, Object, String } = globalThis;


interface IdemRecord {
  fp: string;
  status: number;
  body: unknown;
  requestId: string;
  created: number;
}

const IDEM_TTL_S = 24 * 3600;

function requestIdOf(req: TwinRequest): string {
  const id = req.requestId ?? '';
  if (/^req_[A-Za-z0-9]{8,}$/.test(id)) return id;
  return 'req_' + hash62(id === '' ? String(Math.random()) : id, 14);
}

/** Body and query folded into one parameter object (the body wins on a clash). */
export function parametersOf(req: TwinRequest): Obj {
  const fromQuery = foldBrackets(req.query ?? {});
  let body: unknown = req.body;
  if (body === undefined && typeof req.bodyText === 'string' && req.bodyText !== '') {
    const type = (req.headers['content-type'] ?? '').toLowerCase();
    if (type.includes('json')) {
      try {
        body = JSON.parse(req.bodyText) as unknown;
      } catch {
        throw invalid('Invalid JSON body.');
      }
    } else {
      body = parseForm(req.bodyText);
    }
  }
  if (body === undefined || body === null || body === '') return fromQuery;
  if (!isObj(body)) throw invalid('The request body must be a set of parameters.');
  return { ...fromQuery, ...(toArrays(body) as Obj) };
}

/**
 * Saves a keyed request's answer. Stripe forgets idempotency keys after 24 hours; so does the
 * twin (`prior.created` is checked on use), and it drops expired answers a couple at a time
 * so they do not grow without end (the SDK keys every POST). ('idem.oldest', 'n') holds the
 * time of the oldest saved answer: a request looks for expired ones only when that says there
 * are some, instead of listing the oldest two on every keyed request.
 */
function saveAnswer(ctx: TwinContext, id: string, rec: IdemRecord): void {
  const now = rec.created;
  ctx.tree.put('idem', id, rec);
  ctx.tree.put('idem.by_time', `${String(now).padStart(12, '0')}/${id}`, id);
  const oldest = ctx.tree.get<number>('idem.oldest', 'n');
  if (oldest !== undefined && now - oldest < IDEM_TTL_S) return;
  ctx.tree.put('idem.oldest', 'n', pruneIdempotency(ctx, now));
}

/** Drops up to two expired answers, oldest first; answers the time of the oldest one kept. */
function pruneIdempotency(ctx: TwinContext, now: number): number {
  // Three: two to drop and the next, whose time is then the oldest (this request's own
  // answer, just saved, is always among them when fewer are older).
  const page = ctx.tree.list<string>('idem.by_time', { limit: 3 });
  let dropped = 0;
  for (const item of page.items) {
    const created = Number(item.id.slice(0, 12));
    if (dropped === 2 || now - created < IDEM_TTL_S) return created;
    ctx.tree.delete('idem.by_time', item.id);
    const rec = ctx.tree.get<IdemRecord>('idem', item.value);
    if (rec !== undefined && rec.created === created) ctx.tree.delete('idem', item.value);
    dropped++;
  }
  return now;
}

/** A saved answer, when the record holds one: a replay answers its body as it is. */
function savedAnswer(ctx: TwinContext, id: string): IdemRecord | undefined {
  const v = ctx.tree.get<unknown>('idem', id);
  if (v === undefined) return undefined;
  const r = v as Partial<IdemRecord> | null;
  if (!isObj(r) || typeof r.fp !== 'string' || typeof r.status !== 'number' || typeof r.created !== 'number' || typeof r.requestId !== 'string' || !isObj(r.body)) {
    throw malformedRecord('idem', id, 'not a saved answer { fp, status, body, requestId, created }');
  }
  return r as IdemRecord;
}

function json(status: number, body: unknown, headers: Record<string, string>): TwinResponse {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body };
}

/** Runs one handler as Stripe would: whole or not at all. */
export function run(req: TwinRequest, ctx: TwinContext, fn: Fn, name = ''): TwinResponse {
  const requestId = requestIdOf(req);
  const headers: Record<string, string> = {
    'request-id': requestId,
    'stripe-version': req.headers['stripe-version'] ?? API_VERSION,
  };
  const tx = new TxTree(ctx.tree);
  let c: Call | undefined;
  let idem: { id: string; fp: string } | undefined;
  const finish = (status: number, body: unknown): TwinResponse => {
    if (idem !== undefined && c !== undefined) {
      saveAnswer(ctx, idem.id, { fp: idem.fp, status, body, requestId, created: c.now });
    }
    return json(status, body, headers);
  };
  try {
    const acct = authenticate(req, (account) => ctx.tree.get<unknown>('account', account) !== undefined, () => copiedAccount(ctx.tree));
    const nowMs = ctx.nowMs();
    const key = req.headers['idempotency-key'];
    c = {
      req, ctx, tree: tx, acct, p: new Params(parametersOf(req)), requestId,
      idempotencyKey: key ?? null, nowMs, now: seconds(nowMs), emits: [], schedules: [], endpoints: undefined,
    };
    // Stripe refuses a top-level parameter it does not know (the lists come from the SDK's types).
    const known = KNOWN_PARAMS[name];
    if (known !== undefined) {
      for (const param of Object.keys(c.p.raw)) {
        if (!known.includes(param)) throw invalid(`Received unknown parameter: ${param}`, param, 'parameter_unknown');
      }
    }
    checkStringLengths(c.p.raw, name);
    if (req.method === 'POST' && key !== undefined) {
      headers['idempotency-key'] = key;
      if (key.length > 255) throw invalid('Idempotency keys must be at most 255 characters long.', 'idempotency_key');
      const id = `${acct}/${key}`;
      const fp = hash62(`${req.method} ${req.path} ${canonical(c.p.raw)}`, 22);
      const prior = savedAnswer(ctx, id);
      if (prior !== undefined && c.now - prior.created < IDEM_TTL_S) {
        if (prior.fp !== fp) {
          throw new StripeError(400, 'idempotency_error',
            `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`);
        }
        headers['idempotent-replayed'] = 'true';
        headers['original-request'] = prior.requestId;
        return json(prior.status, prior.body, headers);
      }
      idem = { id, fp };
    }
    let result = fn(c);
    const expand = c.p.strings('expand');
    // Expanding edits the answer in place: work on a copy (reads hand out fresh copies and
    // writes were copied when stored, so without expand the answer can go out as it is).
    if (expand !== undefined && expand.length > 0) {
      result = clone(result);
      applyExpand(c, result, expand);
    }
    commit(c, tx, ctx);
    return finish(200, result);
  } catch (e) {
    if (e instanceof StripeError) {
      if (e.keepWrites && c !== undefined) {
        commit(c, tx, ctx);
        return finish(e.status, e.body());
      }
      // A request refused before it acted leaves no idempotent result, as at Stripe.
      return json(e.status, e.body(), headers);
    }
    const message = e instanceof Error ? e.message : String(e);
    return json(500, { error: { type: 'api_error', message: `An internal error occurred in the Stripe twin: ${message}` } }, headers);
  }
}

function commit(c: Call, tx: TxTree, ctx: TwinContext): void {
  tx.commit();
  for (const e of c.emits) ctx.emit(e.type, e.data);
  for (const s of c.schedules) {
    if (s.move === '') ctx.cancel(s.id);
    else ctx.schedule(s.id, s.move, s.dueAt, s.data);
  }
}

/** Runs one of the twin's own moves for an account, whole or not at all, at `nowMs`. */
export function runMove(ctx: TwinContext, acct: string, nowMs: number, fn: (c: Call) => void): void {
  const tx = new TxTree(ctx.tree);
  const req: TwinRequest = { method: 'MOVE', path: '', params: {}, query: {}, headers: {}, body: undefined, requestId: '', readOnly: false };
  const c: Call = {
    req, ctx, tree: tx, acct, p: new Params({}), requestId: '', idempotencyKey: null,
    nowMs, now: seconds(nowMs), emits: [], schedules: [], endpoints: undefined, automatic: true,
  };
  fn(c);
  commit(c, tx, ctx);
}

/** A Stripe route. Literal routes are listed before parameter routes of the same shape. */
export function route(name: string, method: string, path: string, fn: Fn): Route {
  return { name, match: { method, path }, handle: (req, ctx) => run(req, ctx, fn, name) };
}
