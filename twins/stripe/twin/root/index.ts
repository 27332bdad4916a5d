/**
 * The Stripe twin's root: a copy of a real Stripe account (README, "A real account behind the
 * twin"). A refresh reads `GET /v1/account`, then every list of KINDS a hundred at a time
 * (`starting_after` while `has_more`), then what a subscription or invoice embeds only ten of;
 * each answer becomes the records of the account the copy's keys open. A webhook from the
 * account (`ingest`) files the object it shows, or drops it on `<type>.deleted`.
 */
import type { IngestedWebhook, RootAnswer, RootInfo, RootRead, TwinContext, TwinRoot } from '../../../../sdk/twin/types.js';
import { COPIED_ACCOUNT, ROOT_ACCOUNT_ID, copiedAccount } from '../lib/auth.js';
import { API_VERSION, type Call } from '../lib/request.js';
import { keepCopyAccount, loadRec, unlist } from '../lib/store.js';
import { hash62, isObj, type Obj } from '../lib/util.js';
import { COPIED_ACCOUNT_OBJECT } from '../resources/account.js';
import { LINES } from '../resources/invoices.js';
import { KINDS, copyCall, copyable, done, fileObject, keepAside, kindOf, type Aside, type Kind } from './copy.js';
import { seqsOf } from './seqs.js';

/** What a read is for, handed back with its answer (`RootRead.data`). */
type Step =
  | { step: 'account' }
  /** A page of a list; `above`: the seq of the last object of the page before. */
  | { step: 'list'; type: string; above?: number }
  /** All of what an object embeds ten of; `got`: the pages read before (an invoice's lines). */
  | { step: 'aside'; aside: Aside; got?: Obj[] };

const PAGE = '100';
/** What a refresh keeps aside of one object, at most (Stripe: 250 invoice items on an invoice, 20 items on a subscription). */
const MAX_ASIDE = 2000;

/** Every read names the API version the twin answers in, so the root's objects have its shapes. */
function read(path: string, data: Step, query?: Record<string, string>): RootRead {
  return { path, ...(query === undefined ? {} : { query }), headers: { 'stripe-version': API_VERSION }, data };
}

function listRead(kind: Kind, after?: { id: string; s: number }): RootRead {
  const query: Record<string, string> = { ...kind.query, limit: PAGE };
  if (after !== undefined) query.starting_after = after.id;
  return read(kind.path, after === undefined ? { step: 'list', type: kind.type } : { step: 'list', type: kind.type, above: after.s }, query);
}

function asideRead(aside: Aside, got?: Obj[], after?: string): RootRead {
  const query: Record<string, string> = { limit: PAGE };
  if (after !== undefined) query.starting_after = after;
  const step: Step = got === undefined ? { step: 'aside', aside } : { step: 'aside', aside, got };
  if (aside.type === 'invoice') return read(`/v1/invoices/${encodeURIComponent(aside.id)}/lines`, step, query);
  query.subscription = aside.id;
  return read('/v1/subscription_items', step, query);
}

/** Stripe's error message in an answer, for the refresh's failure. */
function refused(r: RootRead, answer: RootAnswer): Error {
  const body = answer.body;
  const message = isObj(body) && isObj(body.error) && typeof body.error.message === 'string' ? `: ${body.error.message.slice(0, 300)}` : '';
  return new Error(`the root answered ${answer.status} to GET ${r.path}${message}`);
}

/** A list page's `data`, when the answer is Stripe's list. */
function listData(r: RootRead, answer: RootAnswer): { data: unknown[]; hasMore: boolean } {
  const body = answer.body;
  if (!isObj(body) || !Array.isArray(body.data) || typeof body.has_more !== 'boolean') {
    throw new Error(`the root's answer to GET ${r.path} is not a Stripe list ({ data, has_more })`);
  }
  return { data: body.data, hasMore: body.has_more };
}

function accountOfCopy(ctx: TwinContext): string {
  const acct = copiedAccount(ctx.tree);
  if (acct === undefined) throw new Error('a list was read before the account: the refresh starts with GET /v1/account');
  return acct;
}

/**
 * `GET /v1/account`: the account the copy is. A key that may not read it (a restricted key,
 * 403) copies into an account named after the root's URL instead.
 */
function readAccount(r: RootRead, answer: RootAnswer, ctx: TwinContext, root: RootInfo): RootRead[] {
  let acct: string;
  let object: Obj | undefined;
  if (answer.status === 403) {
    acct = 'acct_' + hash62(`root:${root.url}`, 16);
  } else if (answer.status >= 200 && answer.status < 300) {
    const body = answer.body;
    if (!isObj(body) || body.object !== 'account' || typeof body.id !== 'string' || !ROOT_ACCOUNT_ID.test(body.id)) {
      throw new Error(`the root's answer to GET ${r.path} is not a Stripe account with an id (acct_…)`);
    }
    acct = body.id;
    object = body;
  } else {
    throw refused(r, answer);
  }
  const c = copyCall(ctx, acct);
  if (!keepCopyAccount(c)) {
    throw new Error(`the twin already holds the account ${acct} as one of its own (begun by an API key before the root was set): a copy cannot share it`);
  }
  c.tree.put(COPIED_ACCOUNT.type, COPIED_ACCOUNT.id, acct);
  if (object !== undefined) c.tree.put(COPIED_ACCOUNT_OBJECT, acct, object);
  done(c);
  return KINDS.map((kind) => listRead(kind));
}

/** A page of one of KINDS: files every object on it; answers the next page and what they embed ten of. */
function readList(r: RootRead, step: { type: string; above?: number }, answer: RootAnswer, ctx: TwinContext): RootRead[] {
  const kind = kindOf(step.type);
  if (kind === undefined) throw new Error(`a read for an unknown list (${step.type})`);
  // A list the credential may not read (a restricted key): nothing of it is copied.
  if (answer.status === 403) return [];
  if (answer.status < 200 || answer.status >= 300) throw refused(r, answer);
  const { data, hasMore } = listData(r, answer);
  const objects = data.map((o, i) => {
    const ok = copyable(o, kind.type);
    if (ok === undefined) throw new Error(`item ${i} of the root's answer to GET ${r.path} is not a ${kind.type} with an id`);
    return ok;
  });
  const c = copyCall(ctx, accountOfCopy(ctx));
  const stored = objects.map((o) => loadRec(c, kind.type, o.id as string));
  const seqs = seqsOf(c, kind.type, objects, stored, step.above);
  const next: RootRead[] = [];
  objects.forEach((o, i) => {
    const aside = fileObject(c, kind.type, o, seqs[i] as number, stored[i], false);
    if (aside !== undefined) next.push(asideRead(aside));
  });
  done(c);
  const last = objects.length - 1;
  if (hasMore && last >= 0) next.unshift(listRead(kind, { id: objects[last]!.id as string, s: seqs[last] as number }));
  return next;
}

/** A page of what a subscription or invoice embeds ten of; kept aside once the last page is in. */
function readAside(r: RootRead, step: { aside: Aside; got?: Obj[] }, answer: RootAnswer, ctx: TwinContext): RootRead[] {
  if (answer.status === 403) return [];
  if (answer.status < 200 || answer.status >= 300) throw refused(r, answer);
  const { data, hasMore } = listData(r, answer);
  const got = [...(step.got ?? []), ...data.filter((item): item is Obj => isObj(item) && typeof item.id === 'string')];
  const last = got[got.length - 1];
  if (hasMore && last !== undefined && got.length < MAX_ASIDE) return [asideRead(step.aside, got, last.id as string)];
  const c = copyCall(ctx, accountOfCopy(ctx));
  keepAside(c, step.aside, got);
  done(c);
  return [];
}

function readStep(r: RootRead, answer: RootAnswer, ctx: TwinContext, root: RootInfo): RootRead[] {
  const step = r.data as Step | undefined;
  if (!isObj(step)) throw new Error(`a read without its step (${r.path})`);
  if (step.step === 'account') return readAccount(r, answer, ctx, root);
  if (step.step === 'list') return readList(r, step, answer, ctx);
  if (step.step === 'aside') return readAside(r, step, answer, ctx);
  throw new Error(`a read of an unknown step (${r.path})`);
}

/**
 * A Stripe event (`{ id, type, data: { object } }`) from the account: the object it shows is
 * filed as a refresh would file it, or dropped on `<type>.deleted` (but a subscription's, which
 * is canceled and stays). Events about objects the copy does not keep, or that came before
 * the first refresh (the copy's account is not known yet), write nothing.
 */
function ingestEvent(webhook: IngestedWebhook, ctx: TwinContext): void {
  const event = webhook.body;
  if (!isObj(event) || typeof event.type !== 'string' || !isObj(event.data) || !isObj(event.data.object)) return;
  const acct = copiedAccount(ctx.tree);
  if (acct === undefined) return;
  const shown = event.data.object;
  const c = copyCall(ctx, acct);
  if (shown.object === 'account') {
    if (event.type === 'account.updated' && shown.id === acct) c.tree.put(COPIED_ACCOUNT_OBJECT, acct, shown);
  } else {
    const kind = typeof shown.object === 'string' ? kindOf(shown.object) : undefined;
    const o = kind === undefined ? undefined : copyable(shown, kind.type);
    if (kind === undefined || o === undefined) return;
    if (kind.deletes && event.type === `${kind.type}.deleted`) drop(c, kind.type, o.id as string);
    else {
      const stored = loadRec(c, kind.type, o.id as string);
      const s = stored?.s ?? (seqsOf(c, kind.type, [o], [undefined], undefined)[0] as number);
      fileObject(c, kind.type, o, s, stored, true);
    }
  }
  done(c);
}

/** An object the root deleted: its records, and what was kept aside for it. */
function drop(c: Call, type: string, id: string): void {
  unlist(c, type, id);
  if (type === 'invoice') c.tree.delete(LINES, `${c.acct}/${id}`);
}

export const stripeRoot: TwinRoot = {
  refresh: { atMost: '30s', every: '1h' },
  start: () => [read('/v1/account', { step: 'account' })],
  read: (r, answer, ctx, root) => readStep(r, answer, ctx, root),
  ingest: { scheme: 'stripe', event: (webhook, ctx) => ingestEvent(webhook, ctx) },
};
