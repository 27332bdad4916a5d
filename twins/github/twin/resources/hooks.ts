/**
 * Repository webhooks. Hooks are records; every delivery is a record too, carrying the exact
 * body and headers a deliverer must send (`X-GitHub-Event`, `X-GitHub-Delivery`,
 * `X-Hub-Signature-256` = HMAC-SHA256 of the body with the hook's secret), and the entry that
 * makes it carries a `webhook.delivery` event naming it. Sending is the host's job.
 *
 * - `hook/<repo id>:<hook id, 10 digits>` → StoredHook;
 * - `delivery/<repo id>:<hook id>:<delivery id, 10 digits>` → StoredDelivery.
 */
import type { Move, TwinContext, TwinRequest } from '../../../../sdk/twin/index.js';
import { hubSignature256 } from '../lib/hash.js';
import {
  bodyObject, cursorLinks, isoNow, nextNumber, optBool, optStringArray, pad, pageOf, paginate, str, type Call, type Obj,
} from '../lib/http.js';
import { GhError, notFound, validation } from '../errors.js';
import { listRange } from '../lib/records.js';
import { simpleUserByLogin, type Caller } from '../lib/users.js';
import { loadRepo, presentRepo, repoApi, type StoredRepo } from './repos.js';

export interface HookConfig {
  url: string;
  content_type: 'json' | 'form';
  insecure_ssl: string;
  secret?: string;
}

export interface StoredHook {
  id: number;
  repoId: number;
  name: 'web';
  active: boolean;
  events: string[];
  config: HookConfig;
  created_at: string;
  updated_at: string;
  /**
   * Copied from the real repository behind the twin (`../root/`): never delivered to. Its
   * receiver belongs to the real repository, and the copy knows no secret to sign with.
   */
  copied?: true;
}

export interface StoredDelivery {
  id: number;
  guid: string;
  hook_id: number;
  repository_id: number;
  event: string;
  action: string | null;
  delivered_at: string;
  redelivery: boolean;
  url: string;
  /** Exactly what goes on the wire. */
  request: { headers: Record<string, string>; payload: Obj; body: string };
  status: string;
  status_code: number;
  duration: number;
}

const hookKey = (repoId: number, id: number): string => `${repoId}:${pad(id)}`;

export const HOOK_EVENTS = [
  '*', 'push', 'issues', 'issue_comment', 'pull_request', 'pull_request_review', 'label', 'milestone', 'create', 'delete', 'repository',
  'ping', 'pull_request_review_comment', 'status', 'check_run', 'check_suite', 'release', 'workflow_run', 'member', 'public', 'star', 'watch',
];

function hooksOf(call: { ctx: TwinContext }, repoId: number): StoredHook[] {
  return listRange<StoredHook>(call.ctx.tree, 'hook', `${repoId}:`, `${repoId};`).map((i) => i.value);
}

/**
 * GitHub's cap: "You can create up to 20 webhooks for each event on each installation target"
 * (docs.github.com, troubleshooting webhooks). Past it, GitHub answers 422 with `The "push"
 * event cannot have more than 20 hooks` for each full event. Every hook is delivered to on
 * every event it names, so this also bounds what one push costs.
 */
const HOOKS_PER_EVENT = 20;

function checkHookRoom(hooks: StoredHook[], events: string[], except?: number): void {
  const others = hooks.filter((h) => h.id !== except);
  const full = events.filter((e) => others.filter((h) => h.events.includes(e)).length >= HOOKS_PER_EVENT);
  if (full.length > 0) throw validation(full.map((e) => ({ resource: 'Hook', code: 'custom', message: `The "${e}" event cannot have more than ${HOOKS_PER_EVENT} hooks` })));
}

function presentHook(repo: StoredRepo, h: StoredHook, lastResponse: Obj = { code: null, status: 'unused', message: null }): Obj {
  const u = `${repoApi(repo)}/hooks/${h.id}`;
  const config: Obj = { url: h.config.url, content_type: h.config.content_type, insecure_ssl: h.config.insecure_ssl };
  if (h.config.secret !== undefined) config['secret'] = '********';
  return {
    type: 'Repository',
    id: h.id,
    name: h.name,
    active: h.active,
    events: h.events,
    config,
    updated_at: h.updated_at,
    created_at: h.created_at,
    url: u,
    test_url: `${u}/test`,
    ping_url: `${u}/pings`,
    deliveries_url: `${u}/deliveries`,
    last_response: lastResponse,
  };
}

/** A delivery GUID (version-4 layout) from the world's deterministic generator. */
function guid(ctx: TwinContext): string {
  const h = (n: number): string => {
    let s = '';
    for (let i = 0; i < n; i++) s += Math.floor(ctx.random() * 16).toString(16);
    return s;
  };
  return `${h(8)}-${h(4)}-4${h(3)}-${'89ab'.charAt(Math.floor(ctx.random() * 4))}${h(3)}-${h(12)}`;
}

function record(ctx: TwinContext, req: TwinRequest | undefined, repo: StoredRepo, hook: StoredHook, event: string, payload: Obj, redelivery = false): void {
  // A hook copied from the real repository is shown, never sent to (a ping or a redelivery neither).
  if (hook.copied === true) return;
  const id = nextNumber(ctx, 'delivery');
  const delivery = guid(ctx);
  const json = JSON.stringify(payload);
  const body = hook.config.content_type === 'form' ? `payload=${encodeURIComponent(json)}` : json;
  const headers: Record<string, string> = {
    'user-agent': 'GitHub-Hookshot/twinkit',
    'content-type': hook.config.content_type === 'form' ? 'application/x-www-form-urlencoded' : 'application/json',
    'x-github-event': event,
    'x-github-delivery': delivery,
    'x-github-hook-id': String(hook.id),
    'x-github-hook-installation-target-type': 'repository',
    'x-github-hook-installation-target-id': String(repo.id),
  };
  if (hook.config.secret !== undefined && hook.config.secret !== '') headers['x-hub-signature-256'] = hubSignature256(hook.config.secret, body);
  // The caller's trace goes on, so a deliverer can continue it.
  const traceparent = req?.headers['traceparent'];
  if (traceparent !== undefined && /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/.test(traceparent)) headers['traceparent'] = traceparent;
  const action = typeof payload['action'] === 'string' ? payload['action'] : null;
  const stored: StoredDelivery = {
    id, guid: delivery, hook_id: hook.id, repository_id: repo.id, event, action, delivered_at: isoNow(ctx), redelivery,
    url: hook.config.url, request: { headers, payload, body }, status: 'pending', status_code: 0, duration: 0,
  };
  ctx.tree.put('delivery', `${repo.id}:${pad(hook.id)}:${pad(id)}`, stored);
  // The world's deliverer sends it once the entry is durable and hands each attempt's outcome
  // back through the `webhook.result` move, with this `id`.
  ctx.emit('webhook.delivery', {
    id: `${repo.id}:${pad(hook.id)}:${pad(id)}`, delivery_id: id, guid: delivery, hook_id: hook.id, repository_id: repo.id, event, action,
    url: hook.config.url, method: 'POST', headers, body, insecure_ssl: hook.config.insecure_ssl === '1',
  });
}

/** Whether any active hook of the repository takes `event`: when none does, a payload need not be built. */
export function listens(call: { ctx: TwinContext; req?: TwinRequest; caller: Caller | null }, repo: StoredRepo, event: string): boolean {
  return hooksOf(call, repo.id).some((h) => h.active && h.copied !== true && (h.events.includes(event) || h.events.includes('*')));
}

/**
 * Sends `event` to every active hook of the repository that listens for it. `payload` gets
 * `repository` and `sender` added, as in every GitHub webhook.
 */

export function deliver(call: { ctx: TwinContext; req?: TwinRequest; caller: Caller | null }, repo: StoredRepo, event: string, payload: Obj): void {
  const hooks = hooksOf(call, repo.id).filter((h) => h.active && h.copied !== true && (h.events.includes(event) || h.events.includes('*')));
  if (hooks.length === 0) return;
  const full: Obj = { ...payload, repository: presentRepo(call.ctx.tree, repo, null, false), sender: simpleUserByLogin(call.ctx.tree, call.caller?.login ?? 'ghost') };
  for (const h of hooks) record(call.ctx, call.req, repo, h, event, full);
}

function readConfig(b: Obj, current?: HookConfig): HookConfig {
  const raw = b['config'];
  if (raw === undefined && current !== undefined) return current;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw validation([{ resource: 'Hook', field: 'config', code: 'missing_field' }]);
  const c = raw as Obj;
  const url = c['url'] ?? current?.url;
  if (typeof url !== 'string' || !/^https?:\/\/[^\s]+$/.test(url)) throw validation([{ resource: 'Hook', code: 'custom', field: 'url', message: 'url is not a valid URL' }]);
  const ct = c['content_type'] ?? current?.content_type ?? 'form';
  if (ct !== 'json' && ct !== 'form') throw validation([{ resource: 'Hook', code: 'invalid', field: 'content_type', value: ct }]);
  const insecure = c['insecure_ssl'] ?? current?.insecure_ssl ?? '0';
  const secret = c['secret'] === undefined ? current?.secret : c['secret'];
  if (secret !== undefined && typeof secret !== 'string') throw validation([{ resource: 'Hook', code: 'invalid', field: 'secret' }]);
  const out: HookConfig = { url, content_type: ct, insecure_ssl: String(insecure) === '1' ? '1' : '0' };
  if (secret !== undefined && secret !== '') out.secret = secret;
  return out;
}

function readEvents(list: string[]): string[] {
  for (const e of list) if (!HOOK_EVENTS.includes(e)) throw validation([{ resource: 'Hook', code: 'custom', field: 'events', message: `${e} is not a valid event name` }]);
  return [...new Set(list)];
}

export function createHook(call: Call): { status: number; body: Obj } {
  const { ctx } = call;
  const repo = loadRepo(call, 'admin');
  const b = bodyObject(call.req);
  if (b['name'] !== undefined && b['name'] !== 'web') throw validation([{ resource: 'Hook', code: 'custom', field: 'name', message: 'name is not a valid hook name' }]);
  const config = readConfig(b);
  const events = readEvents(optStringArray(b, 'events', 'Hook') ?? ['push']);
  const active = optBool(b, 'active', 'Hook') ?? true;
  const hooks = hooksOf(call, repo.id);
  if (hooks.some((h) => h.config.url === config.url && h.events.join() === events.join())) {
    throw validation([{ resource: 'Hook', code: 'custom', message: 'Hook already exists on this repository' }]);
  }
  checkHookRoom(hooks, events);
  const now = isoNow(ctx);
  const hook: StoredHook = { id: nextNumber(ctx, 'hook'), repoId: repo.id, name: 'web', active, events, config, created_at: now, updated_at: now };
  ctx.tree.put('hook', hookKey(repo.id, hook.id), hook);
  const body = presentHook(repo, hook);
  if (active) {
    record(ctx, call.req, repo, hook, 'ping', {
      zen: 'Keep it logically awesome.', hook_id: hook.id, hook: body,
      repository: presentRepo(ctx.tree, repo, null, false), sender: simpleUserByLogin(ctx.tree, call.caller?.login ?? 'ghost'),
    });
  }
  call.headers['location'] = body['url'] as string;
  return { status: 201, body };
}

function loadHook(call: Call, repo: StoredRepo): StoredHook {
  const id = call.req.params['hook_id'] ?? '';
  if (!/^\d{1,10}$/.test(id)) throw notFound();
  const h = call.ctx.tree.get<StoredHook>('hook', hookKey(repo.id, Number(id)));
  if (h === undefined) throw notFound();
  return h;
}

/** A hook's deliveries are one key range, oldest first (delivery ids only grow). */
const deliveryRange = (repoId: number, hookId: number): { after: string; before: string } => ({ after: `${repoId}:${pad(hookId)}:`, before: `${repoId}:${pad(hookId)};` });

/** The newest delivery: one record read from the top of the range, however many there are. */
function newestDelivery(call: Call, repo: StoredRepo, hookId: number): StoredDelivery | undefined {
  return call.ctx.tree.list<StoredDelivery>('delivery', { ...deliveryRange(repo.id, hookId), reverse: true, limit: 1 }).items[0]?.value;
}

function lastResponse(d: StoredDelivery | undefined): Obj {
  if (d === undefined) return { code: null, status: 'unused', message: null };
  return { code: d.status_code === 0 ? null : d.status_code, status: d.status === 'OK' ? 'active' : d.status, message: d.status === 'pending' ? 'Pending delivery' : d.status === 'OK' ? 'OK' : d.status };
}

export function listHooks(call: Call): { body: Obj[] } {
  const repo = loadRepo(call, 'admin');
  return { body: paginate(call, hooksOf(call, repo.id)).map((h) => presentHook(repo, h)) };
}

export function getHook(call: Call): { body: Obj } {
  const repo = loadRepo(call, 'admin');
  const h = loadHook(call, repo);
  return { body: presentHook(repo, h, lastResponse(newestDelivery(call, repo, h.id))) };
}

export function updateHook(call: Call): { body: Obj } {
  const repo = loadRepo(call, 'admin');
  const h = loadHook(call, repo);
  const b = bodyObject(call.req);
  const config = readConfig(b, h.config);
  let events = optStringArray(b, 'events', 'Hook') ?? h.events;
  const add = optStringArray(b, 'add_events', 'Hook') ?? [];
  const remove = optStringArray(b, 'remove_events', 'Hook') ?? [];
  events = readEvents([...events, ...add].filter((e) => !remove.includes(e)));
  checkHookRoom(hooksOf(call, repo.id), events.filter((e) => !h.events.includes(e)), h.id);
  const active = optBool(b, 'active', 'Hook') ?? h.active;
  const updated: StoredHook = { ...h, config, events, active, updated_at: isoNow(call.ctx) };
  call.ctx.tree.put('hook', hookKey(repo.id, h.id), updated);
  return { body: presentHook(repo, updated) };
}

export function deleteHook(call: Call): { status: number } {
  const repo = loadRepo(call, 'admin');
  const h = loadHook(call, repo);
  call.ctx.tree.delete('hook', hookKey(repo.id, h.id));
  return { status: 204 };
}

export function pingHook(call: Call): { status: number } {
  const repo = loadRepo(call, 'admin');
  const h = loadHook(call, repo);
  record(call.ctx, call.req, repo, h, 'ping', {
    zen: 'Design for failure.', hook_id: h.id, hook: presentHook(repo, h),
    repository: presentRepo(call.ctx.tree, repo, null, false), sender: simpleUserByLogin(call.ctx.tree, call.caller?.login ?? 'ghost'),
  });
  return { status: 204 };
}

function presentDelivery(d: StoredDelivery, detail: boolean): Obj {
  const out: Obj = {
    id: d.id, guid: d.guid, delivered_at: d.delivered_at, redelivery: d.redelivery, duration: d.duration, status: d.status,
    status_code: d.status_code, event: d.event, action: d.action, installation_id: null, repository_id: d.repository_id,
  };
  if (detail) {
    out['url'] = d.url;
    out['request'] = { headers: d.request.headers, payload: d.request.payload };
    out['response'] = { headers: {}, payload: null };
  }
  return out;
}

/** A delivery cursor, as GitHub's `Link` gives them: `v1_<delivery id>`, the newest delivery of the page it starts. */
function readCursor(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const m = /^(?:v1_)?(\d{1,10})$/.exec(raw);
  if (m === null) throw new GhError(400, 'Bad Request');
  return Number(m[1]);
}

/**
 * `GET …/hooks/{id}/deliveries`: newest first, `per_page` at a time, paged by `cursor` as GitHub
 * pages this list (no `page` numbers, no `last`). Each page is read from the store's key range,
 * so its cost is the page, not the hook's whole history.
 */
export function listDeliveries(call: Call): { body: Obj[] } {
  const repo = loadRepo(call, 'admin');
  const h = loadHook(call, repo);
  const { perPage } = pageOf(call.req);
  const cursor = readCursor(str(call.req.query, 'cursor'));
  const range = deliveryRange(repo.id, h.id);
  const key = (id: number): string => `${repo.id}:${pad(h.id)}:${pad(id)}`;
  // The page: the cursor's delivery and older ones, newest first, and one more to know a next page is there.
  // `key + '0'` sorts right after the cursor's own key (ids are fixed width), so the page includes it.
  const upTo = cursor === undefined ? range.before : `${key(cursor)}0`;
  const page = call.ctx.tree.list<StoredDelivery>('delivery', { after: range.after, before: upTo, reverse: true, limit: perPage + 1 });
  const items = page.items.slice(0, perPage).map((i) => i.value);
  const more = page.items[perPage]?.value;
  let prev: string | undefined;
  if (cursor !== undefined) {
    // The page before starts perPage deliveries newer than this one (or at the newest).
    const newer = call.ctx.tree.list<StoredDelivery>('delivery', { after: key(cursor), before: range.before, limit: perPage });
    const top = newer.items[newer.items.length - 1]?.value;
    if (top !== undefined) prev = `v1_${top.id}`;
  }
  cursorLinks(call, perPage, { ...(more === undefined ? {} : { next: `v1_${more.id}` }), ...(prev === undefined ? {} : { prev }) });
  return { body: items.map((d) => presentDelivery(d, false)) };
}

function loadDelivery(call: Call, repo: StoredRepo, h: StoredHook): StoredDelivery {
  const id = call.req.params['delivery_id'] ?? '';
  if (!/^\d{1,10}$/.test(id)) throw notFound();
  const d = call.ctx.tree.get<StoredDelivery>('delivery', `${repo.id}:${pad(h.id)}:${pad(Number(id))}`);
  if (d === undefined) throw notFound();
  return d;
}

export function getDelivery(call: Call): { body: Obj } {
  const repo = loadRepo(call, 'admin');
  const h = loadHook(call, repo);
  return { body: presentDelivery(loadDelivery(call, repo, h), true) };
}

export function redeliver(call: Call): { status: number; body: Obj } {
  const repo = loadRepo(call, 'admin');
  const h = loadHook(call, repo);
  const d = loadDelivery(call, repo, h);
  record(call.ctx, call.req, repo, h, d.event, d.request.payload, true);
  return { status: 202, body: {} };
}

/** What the world's deliverer hands the `webhook.result` move after each attempt. */
interface AttemptResult { id: string | null; status: number | null; ok: boolean; error: string | null; durationMs: number; willRetry: boolean }

function statusText(code: number): string {
  return code >= 200 && code < 300 ? 'OK' : code === 0 ? 'failed to connect' : `Invalid HTTP Response: ${code}`;
}

/** The `webhook.result` move: records an attempt's outcome on the delivery (what the deliveries API and `last_response` show). */
export const webhookResult: Move = (ctx, data) => {
  const r = data as Partial<AttemptResult> | null;
  if (r === null || typeof r !== 'object' || typeof r.id !== 'string' || !/^\d+:\d{10}:\d{10}$/.test(r.id)) return;
  const d = ctx.tree.get<StoredDelivery>('delivery', r.id);
  if (d === undefined) return;
  const code = typeof r.status === 'number' ? r.status : 0;
  const status = code === 0 && typeof r.error === 'string' ? `failed to connect: ${r.error.slice(0, 200)}` : statusText(code);
  ctx.tree.put('delivery', r.id, { ...d, status_code: code, status, duration: typeof r.durationMs === 'number' ? r.durationMs / 1000 : 0 });
};

/**
 * `PUT /_twin/repositories/{repository_id}/hooks/{hook_id}/deliveries/{delivery_id}`
 * `{ status_code, duration?, response_headers?, response_body? }` — twin-only, site admin
 * (world token) only: how a deliverer records what the receiver answered, so the deliveries
 * API and the hook's `last_response` show it. `status_code` 0 means the request failed.
 */
export function recordDeliveryResult(call: Call): { body: Obj } {
  if (call.caller === null || !call.caller.siteAdmin) throw notFound();
  const ids = ['repository_id', 'hook_id', 'delivery_id'].map((k) => call.req.params[k] ?? '');
  if (!ids.every((x) => /^\d{1,10}$/.test(x))) throw notFound();
  const [repoId, hookId, deliveryId] = ids.map(Number) as [number, number, number];
  const key = `${repoId}:${pad(hookId)}:${pad(deliveryId)}`;
  const d = call.ctx.tree.get<StoredDelivery>('delivery', key);
  if (d === undefined) throw notFound();
  const b = bodyObject(call.req);
  const code = b['status_code'];
  if (typeof code !== 'number' || !Number.isInteger(code) || code < 0 || code > 599) throw validation([{ resource: 'HookDelivery', field: 'status_code', code: 'invalid', value: code }]);
  const duration = typeof b['duration'] === 'number' && b['duration'] >= 0 ? b['duration'] : 0;
  const status = statusText(code);
  const updated: StoredDelivery = { ...d, status_code: code, status, duration };
  call.ctx.tree.put('delivery', key, updated);
  return { body: presentDelivery(updated, false) };
}
