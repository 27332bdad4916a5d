/**
 * The world's origin: the world it was made from (a branch's parent), or one named with
 * `PUT …/origin`, whose history is brought in. `pull` brings what the origin has since this
 * world last matched it: appended as it is where this world has no unpushed changes of its own,
 * else merged record by record and field by field (merge.ts) into one entry, naming each
 * conflict. `push` sends every changeset cut here and not pushed yet, oldest first.
 */
import { KitError } from '../../errors.js';
import type { Sealer } from '../../roots/sealing.js';
import type { Entry, EntryDraft, RecordWrite } from '../../world/types.js';
import type { ChangesetHost } from '../services.js';
import { hashOf } from './body.js';
import type { ChangesetSet } from './changesets.js';
import { mergeRecord, type Conflict, type Side } from './merge.js';
import { OriginClient, originApiUrl, type OriginAnswer } from './origin.js';
import type { Bookkeeping, OriginState } from './store.js';
import type { Change, StoredChangeset } from './types.js';

/** How a host reaches a branch's parent on itself: its world API, with the parent's own authority. */
export type ParentApi = (method: string, path: string, body?: unknown) => Promise<OriginAnswer>;

interface Caller {
  call(method: string, path: string, body?: unknown): Promise<OriginAnswer>;
  read(path: string): Promise<unknown>;
}

const LOG_PAGE = 1000;
/** What one pull or bringing-in takes from the origin per twin. */
const MAX_PULLED = 200_000;

export class Origins {
  constructor(
    private readonly host: ChangesetHost,
    private readonly changesets: ChangesetSet,
    private readonly options: { sealer?: Sealer; parentApi?: ParentApi },
  ) {}

  private context(): string {
    return `${this.host.name}\norigin`;
  }

  /** `GET …/origin`. */
  get(): { origin: Omit<OriginState, 'token' | 'api'> | null } {
    const o = this.changesets.bookkeeping().origin;
    if (o === null) return { origin: null };
    const { token: _token, api: _api, ...shown } = o;
    void _token;
    void _api;
    return { origin: shown };
  }

  private async caller(origin: OriginState): Promise<Caller> {
    if (origin.kind === 'parent') {
      const parent = this.options.parentApi;
      if (parent === undefined) throw new KitError('no_origin', `This branch's parent (${origin.world}) cannot be reached from here; name an origin with PUT …/origin { url, token }.`);
      return {
        call: parent,
        read: async (path) => {
          const r = await parent('GET', path);
          if (r.status !== 200) throw new KitError('origin_unreachable', `The parent answered GET ${path} with ${r.status}.`, { status: r.status });
          return r.body;
        },
      };
    }
    if (this.options.sealer === undefined) throw new KitError('sealing_unavailable', "This host has no sealing key, so the origin's token cannot be opened.");
    const token = await this.options.sealer.open(origin.token!, this.context());
    return new OriginClient(this.host.roots.outbound(), origin.api!, token);
  }

  private requireOrigin(): OriginState {
    const o = this.changesets.bookkeeping().origin;
    if (o === null) throw new KitError('no_origin', 'This world has no origin; name one with PUT …/origin { url, token }.');
    return o;
  }

  /** `PUT …/origin`: names the origin and brings its history in, into a world with none of its own. */
  async put(body: unknown): Promise<{ origin: unknown; brought: Record<string, number> }> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new KitError('invalid_origin', 'Send { "url": "https://<host>/<org>/<world>", "token": "…" }.');
    const fields = body as Record<string, unknown>;
    for (const k of Object.keys(fields)) if (k !== 'url' && k !== 'token') throw new KitError('invalid_origin', `An origin has url and token, not '${k.slice(0, 40)}'.`, { param: k.slice(0, 40) });
    const { url, api, world } = originApiUrl(fields['url'], this.host.roots.loopback);
    const token = fields['token'];
    if (typeof token !== 'string' || token.length < 8 || token.length > 4096 || /[\s\u0000-\u001f]/.test(token)) throw new KitError('invalid_origin', "'token' is the origin world's token.", { param: 'token' });
    if (this.options.sealer === undefined) throw new KitError('sealing_unavailable', "This host has no sealing key, so the origin's token cannot be kept.");
    const client = new OriginClient(this.host.roots.outbound(), api, token);
    const twins = [...this.host.twins.keys()].sort();
    return this.changesets.holdAll(twins, async () => {
      const book = this.changesets.bookkeeping();
      const mine = twins.filter((t) => this.host.world.head(t) > 0);
      if (mine.length > 0 && !(book.origin?.kind === 'url' && book.origin.url === url)) {
        throw new KitError('origin_needs_empty_world', `This world already has history of its own (${mine.join(', ')}); an origin is named for a new world, whose history it brings in.`);
      }
      const map = (await client.read('/map')) as { twins?: { twin: string; position: number }[] } | null;
      if (!map || !Array.isArray(map.twins)) throw new KitError('invalid_origin', 'The origin did not answer a world map; is it a twinkit world?');
      const theirs = new Map(map.twins.map((t) => [t.twin, t.position]));
      const shared = twins.filter((t) => theirs.has(t));
      if (shared.length === 0) throw new KitError('invalid_origin', `The origin serves none of this world's twins (${twins.join(', ')}).`);
      const sealed = await this.options.sealer!.seal(token, this.context());
      const synced: OriginState['synced'] = { ...(book.origin?.kind === 'url' && book.origin.url === url ? book.origin.synced : {}) };
      const brought: Record<string, number> = {};
      // Fetched whole before anything is appended: an origin that fails half-way leaves nothing.
      const fetched = new Map<string, Entry[]>();
      for (const twin of shared) fetched.set(twin, await this.entriesAfter(client, twin, synced[twin]?.theirs ?? 0, theirs.get(twin)!));
      for (const twin of shared) {
        const entries = fetched.get(twin)!;
        const through = theirs.get(twin)!;
        if (entries.length > 0) this.host.appendEntries(twin, entries.map((e) => pulled(e, url, through)));
        brought[twin] = entries.length;
        synced[twin] = { ours: this.host.world.head(twin), theirs: through };
      }
      const origin: OriginState = { kind: 'url', url, api, world, token: sealed, since: new Date(this.host.world.nowMs()).toISOString(), synced };
      const cutThrough = { ...book.cutThrough };
      for (const twin of shared) cutThrough[twin] = this.host.world.head(twin);
      this.changesets.store.saveBookkeeping({ ...book, origin, cutThrough });
      await this.host.durable();
      return { ...this.get(), brought };
    });
  }

  /** The origin's entries of a twin after a position, page by page. */
  private async entriesAfter(client: Caller, twin: string, after: number, through: number): Promise<Entry[]> {
    const out: Entry[] = [];
    let cursor = after;
    while (cursor < through) {
      const page = (await client.read(`/log/${encodeURIComponent(twin)}?after=${cursor}&limit=${LOG_PAGE}`)) as { entries?: Entry[] } | null;
      const entries = page?.entries;
      if (!Array.isArray(entries) || entries.length === 0) break;
      for (const e of entries) {
        if (e.position > through) return out;
        if (e.position !== cursor + 1) throw new KitError('invalid_origin', `The origin's log of ${twin} skips from ${cursor} to ${e.position}.`);
        out.push(e);
        cursor = e.position;
      }
      if (out.length > MAX_PULLED) throw new KitError('changeset_too_large', `The origin has more than ${MAX_PULLED} new entries of ${twin}; pull in smaller steps is not possible yet.`);
    }
    return out;
  }

  /**
   * `POST …/origin/pull`. What the origin has is fetched with nothing held (a slow origin holds
   * up none of the world's requests), then applied holding every twin, if this world has not
   * moved its origin on meanwhile (else fetched again).
   */
  async pull(body: unknown): Promise<unknown> {
    const resolution = readResolution(body);
    const client = await this.caller(this.requireOrigin());
    const twins = [...this.host.twins.keys()].sort();
    for (let attempt = 1; ; attempt++) {
      const seen = this.requireOrigin();
      const { theirHeads, fetched } = await this.fetchSince(client, twins, seen);
      const applied = await this.changesets.holdAll(twins, async () => {
        const book = this.changesets.bookkeeping();
        if (JSON.stringify(book.origin?.synced) !== JSON.stringify(seen.synced)) return null;
        return this.apply(book, theirHeads, fetched, resolution);
      });
      if (applied !== null) return applied;
      if (attempt === 3) throw new KitError('origin_unreachable', 'The world kept moving its origin on while pulling (another pull or push); try again.');
    }
  }

  /** The origin's heads, and its entries of each twin since this world last matched it. */
  private async fetchSince(client: Caller, twins: string[], o: OriginState): Promise<{ theirHeads: Map<string, number>; fetched: Map<string, Entry[]> }> {
    const map = (await client.read('/map')) as { twins?: { twin: string; position: number }[] } | null;
    if (!map || !Array.isArray(map.twins)) throw new KitError('invalid_origin', 'The origin did not answer a world map.');
    const theirHeads = new Map(map.twins.map((t) => [t.twin, t.position]));
    const fetched = new Map<string, Entry[]>();
    for (const twin of twins) {
      const synced = o.synced[twin];
      const head = theirHeads.get(twin);
      if (synced === undefined || head === undefined) continue;
      if (head < synced.theirs) throw new KitError('invalid_origin', `The origin's log of ${twin} is shorter (${head}) than where this world last matched it (${synced.theirs}); was it made again?`);
      if (head > synced.theirs) fetched.set(twin, await this.entriesAfter(client, twin, synced.theirs, head));
    }
    return { theirHeads, fetched };
  }

  /** What was fetched, appended as it is or merged; nothing written when a conflict is left. */
  private async apply(book: Bookkeeping, theirHeads: Map<string, number>, fetched: Map<string, Entry[]>, resolution: Resolution): Promise<unknown> {
    const o = book.origin!;
    // The changes not cut yet, read once: the merge's bases, and what a rebase leaves to them.
    const uncut = this.changesets.unpushedChanges().changes;
    const unpushed = this.unpushedRecords(uncut);
    const plan = new Map<string, { fastForward: Entry[] } | { merge: RecordWrite[] }>();
    const conflicts: Conflict[] = [];
    const mergeBase = { ...book.mergeBase };
    for (const [twin, entries] of fetched) {
      const mine = unpushed.get(twin);
      if (mine === undefined || mine.size === 0) {
        plan.set(twin, { fastForward: entries });
        continue;
      }
      const theirs = new Map<string, RecordWrite>();
      for (const e of entries) for (const w of e.writes) theirs.set(`${w.type}/${w.id}`, w);
      const writes: RecordWrite[] = [];
      for (const [rid, w] of theirs) {
        const ours = this.host.world.getRecord(twin, w.type, w.id) ?? null;
        let merged: unknown = w.value;
        const key = `${twin}/${rid}`;
        if (mine.has(rid)) {
          const base = key in mergeBase ? mergeBase[key] : mine.get(rid);
          const m = mergeRecord({ twin, type: w.type, id: w.id }, base, ours, w.value, (k) => resolution.one[k] ?? resolution.all);
          conflicts.push(...m.conflicts);
          merged = m.value;
          mergeBase[key] = w.value;
        }
        if (!same(merged, ours)) writes.push({ type: w.type, id: w.id, value: merged });
      }
      plan.set(twin, { merge: writes });
    }
    if (conflicts.length > 0) {
      throw new KitError('pull_conflicts', `The origin changed ${conflicts.length} field${conflicts.length === 1 ? '' : 's'} this world changed too; nothing was pulled. Pull again with { "resolve": { "<key>": "ours" | "theirs" } } (or { "take": "ours" | "theirs" }).`, { conflicts });
    }
    const pulledCounts: Record<string, number> = {};
    const synced = { ...o.synced };
    const mergedInto = new Map<string, RecordWrite[]>();
    for (const [twin, step] of plan) {
      const through = theirHeads.get(twin)!;
      if ('fastForward' in step) {
        if (step.fastForward.length > 0) this.host.appendEntries(twin, step.fastForward.map((e) => pulled(e, o.url ?? o.world, through)));
        pulledCounts[twin] = step.fastForward.length;
      } else {
        if (step.merge.length > 0) {
          this.host.appendEntries(twin, [{ cause: { kind: 'pull', origin: o.url ?? o.world, through, merged: true }, writes: step.merge }]);
          mergedInto.set(twin, step.merge);
        }
        pulledCounts[twin] = fetched.get(twin)!.length;
      }
      synced[twin] = { ours: this.host.world.head(twin), theirs: through };
    }
    const rebased = this.rebase(synced, mergedInto, uncut);
    this.changesets.store.saveBookkeeping({ ...book, origin: { ...o, synced }, mergeBase });
    await this.host.durable();
    return { pulled: pulledCounts, merged: mergedInto.size > 0, conflicts: [], rebased };
  }

  /**
   * Per twin, the records this world's unpushed changes wrote (cut and not pushed, or not cut
   * yet), each with its value before the first of them: the base of a merge.
   */
  private unpushedRecords(uncut: readonly Change[]): Map<string, Map<string, unknown>> {
    const out = new Map<string, Map<string, unknown>>();
    const note = (twin: string, rid: string, before: unknown): void => {
      let m = out.get(twin);
      if (m === undefined) out.set(twin, (m = new Map()));
      if (!m.has(rid)) m.set(rid, before);
    };
    for (const cs of this.changesets.store.all()) {
      if (cs.origin !== 'cut' || cs.pushed !== null) continue;
      for (const c of cs.changes) for (const w of c.writes) note(c.twin, `${w.type}/${w.id}`, w.before);
    }
    for (const c of uncut) for (const w of c.writes) note(c.twin, `${w.type}/${w.id}`, w.before);
    return out;
  }

  /**
   * Changesets cut and not pushed, moved onto what was pulled: their base is the origin's new
   * position, and a record a merge changed takes the merged value in the last change that
   * wrote it. Their hash changes with them; their verifications and approvals stay with the
   * old one (an earlier version).
   */
  private rebase(synced: OriginState['synced'], merged: Map<string, RecordWrite[]>, uncut: readonly Change[]): string[] {
    const pending = this.changesets.store.all().filter((c) => c.origin === 'cut' && c.pushed === null);
    if (pending.length === 0) return [];
    const counts = new Map<string, number>();
    const rebased: string[] = [];
    for (const cs of pending) {
      const base: Record<string, number> = {};
      for (const twin of Object.keys(cs.base)) base[twin] = (synced[twin]?.theirs ?? cs.base[twin]!) + (counts.get(twin) ?? 0);
      for (const c of cs.changes) counts.set(c.twin, (counts.get(c.twin) ?? 0) + 1);
      const changes = cs.changes.map((c) => ({ ...c, writes: c.writes.map((w) => ({ ...w })) }));
      for (const [twin, writes] of merged) {
        for (const w of writes) {
          const laterUncut = uncut.some((c) => c.twin === twin && c.writes.some((x) => x.type === w.type && x.id === w.id));
          const laterCut = pending.slice(pending.indexOf(cs) + 1).some((p) => p.changes.some((c) => c.twin === twin && c.writes.some((x) => x.type === w.type && x.id === w.id)));
          if (laterUncut || laterCut) continue;
          const last = [...changes].reverse().find((c) => c.twin === twin && c.writes.some((x) => x.type === w.type && x.id === w.id));
          if (last === undefined) continue;
          const write = [...last.writes].reverse().find((x) => x.type === w.type && x.id === w.id)!;
          write.after = w.value;
        }
      }
      const next: StoredChangeset = { ...cs, base, changes };
      next.contentHash = hashOf(next);
      if (next.contentHash !== cs.contentHash) {
        this.changesets.store.save(next);
        rebased.push(cs.name);
      }
    }
    return rebased;
  }

  /** `POST …/origin/push`: every changeset cut here and not pushed, oldest first. */
  async push(): Promise<unknown> {
    const origin = this.requireOrigin();
    const client = await this.caller(origin);
    const pushed: unknown[] = [];
    return this.changesets.holdAll([], async () => {
      for (const cs of this.changesets.store.all()) {
        if (cs.origin !== 'cut' || cs.pushed !== null) continue;
        const body = this.changesets.view(cs);
        const r = await client.call('POST', '/push', body);
        if (r.status !== 201) {
          const error = (r.body as { error?: { code?: string; message?: string; drift?: unknown } } | null)?.error;
          const code = error?.code === 'base_not_current' || error?.code === 'changeset_exists' || error?.code === 'changeset_hash_mismatch' ? error.code : 'origin_unreachable';
          // The drift where a caller of the origin's own push finds it.
          const drift = code === 'base_not_current' && error?.drift !== undefined ? { drift: error.drift } : {};
          throw new KitError(code, `The origin refused '${cs.name}' (${r.status}${error?.code ? ` ${error.code}` : ''}): ${error?.message ?? ''}`.trim(), { pushed, refused: cs.name, ...drift, origin: r.body });
        }
        const answer = r.body as { appended?: Record<string, [number, number]>; deployed?: { receipts?: unknown[] } };
        const book = this.changesets.bookkeeping();
        const o = book.origin!;
        const synced = { ...o.synced };
        for (const [twin, range] of Object.entries(answer.appended ?? {})) {
          const ours = Math.max(...cs.changes.filter((c) => c.twin === twin).map((c) => c.position ?? 0));
          synced[twin] = { ours: Math.max(ours, synced[twin]?.ours ?? 0), theirs: range[1] };
        }
        const at = new Date(this.host.world.nowMs()).toISOString();
        this.changesets.store.save({ ...cs, pushed: { to: o.url ?? o.world, at, receipts: (answer.deployed?.receipts ?? []) as StoredChangeset['receipts'] } });
        const stillPending = this.changesets.store.all().some((c) => c.origin === 'cut' && c.pushed === null) || Object.keys(this.changesets.unpushedCounts()).length > 0;
        this.changesets.store.saveBookkeeping({ ...book, origin: { ...o, synced }, mergeBase: stillPending ? book.mergeBase : {} });
        await this.host.durable();
        pushed.push({ changeset: cs.name, appended: answer.appended ?? {}, ...(answer.deployed ? { deployed: answer.deployed } : {}) });
      }
      return { pushed };
    });
  }
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function pulled(e: Entry, origin: string, through: number): EntryDraft {
  return { cause: { kind: 'pull', origin, through, merged: false }, writes: e.writes };
}

interface Resolution {
  one: Record<string, Side>;
  all: Side | undefined;
}

function readResolution(body: unknown): Resolution {
  if (body === undefined || body === null) return { one: {}, all: undefined };
  if (typeof body !== 'object' || Array.isArray(body)) throw new KitError('bad_request', 'Send nothing, or { "resolve": { "<conflict key>": "ours" | "theirs" } } or { "take": "ours" | "theirs" }.');
  const fields = body as Record<string, unknown>;
  for (const k of Object.keys(fields)) if (k !== 'resolve' && k !== 'take') throw new KitError('bad_request', `A pull takes resolve and take, not '${k.slice(0, 40)}'.`, { param: k.slice(0, 40) });
  const take = fields['take'];
  if (take !== undefined && take !== 'ours' && take !== 'theirs') throw new KitError('bad_request', "'take' is ours or theirs.", { param: 'take' });
  const resolve = fields['resolve'] ?? {};
  if (typeof resolve !== 'object' || resolve === null || Array.isArray(resolve)) throw new KitError('bad_request', "'resolve' maps conflict keys to ours or theirs.", { param: 'resolve' });
  const one: Record<string, Side> = {};
  for (const [k, v] of Object.entries(resolve)) {
    if (v !== 'ours' && v !== 'theirs') throw new KitError('bad_request', `'resolve.${k.slice(0, 80)}' is ours or theirs.`, { param: 'resolve' });
    one[k] = v;
  }
  return { one, all: take as Side | undefined };
}
