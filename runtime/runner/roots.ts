/**
 * A world's twins and their real vendors: each twin's root, the sealed credentials, refreshes
 * (the twin's `root.read` fed with the vendor's answers, each call one entry caused by the
 * refresh), webhook ingest, and the refresh schedule. The links (stateless forwards) are in
 * links.ts; both reach the vendor only through the host's `OutboundFetch` (roots/vendor-call.ts),
 * which adds the sealed credential. Kept under `['#runner', <world>, 'root' | 'credential' |
 * 'refresh' | 'ingested', …]`: a branch inherits none of it (its copy of the records, yes).
 *
 * Beside every record a refresh or an ingest wrote, a marker (`__root`, id `<type> <id>`)
 * keeps the hash of what the root said: a record whose root value has not changed since it was
 * last seen keeps the world's own edits, and a record no read of a complete refresh wrote is
 * deleted (the root no longer has it).
 */
import { createHash } from 'node:crypto';
import { KitError, isKitError } from '../errors.js';
import type { Key } from '../store/index.js';
import { canonicalJson } from '../world/canonical.js';
import { parseDuration } from '../world/time.js';
import type { Entry, EntryDraft, RecordWrite } from '../world/types.js';
import { parseCredential, parseRoot, type CredentialSecret, type RootConfig } from '../roots/config.js';
import type { OutboundFetch } from '../roots/outbound.js';
import type { Sealer, SealedBox } from '../roots/sealing.js';
import { verifyGithub, verifyStripe } from '../roots/signatures.js';
import { callVendor, scrubSecrets } from '../roots/vendor-call.js';
import { unrefTimer } from '../timers.js';
import type { RootHost } from './services.js';
import type { ServedTwin } from './twins.js';
import type { RootAnswer, RootRead } from '../../sdk/twin/types.js';

/** The marker record type (an SDK type: no twin writes it). */
export const MARKER_TYPE = '__root';
/** A refresh's most reads (10,000 customers are 100 pages of Stripe's). */
const MAX_READS = 10_000;
/** One vendor answer's most bytes. */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
const READ_TIMEOUT_MS = 30_000;
/** Deletions per entry when a refresh sweeps what the root no longer has. */
const SWEEP_CHUNK = 500;
/** When neither the root nor the twin says. */
const DEFAULT_AT_MOST = '30s';
/** Markers are record ids: at most 1,024 characters. */
const MAX_MARKER_ID = 1024;

export interface RootOptions {
  /** The host's one way out. Without it a refresh answers `outbound_failed`. */
  outbound?: OutboundFetch;
  /** Seals credentials; without it sealing answers `sealing_unavailable`. */
  sealer?: Sealer;
  /** Whether roots and links may name loopback (`http` allowed there): local worlds and tests. */
  loopback?: boolean;
}

/** What a world keeps of one credential. */
interface StoredCredential {
  box: SealedBox;
  sealedAt: string;
}

/** A refresh as its status shows it. */
export interface RefreshReport {
  ok: boolean;
  /** The world-clock instant the refresh completed at (its entries' stamp); `x-kit-observed-at`. */
  observedAt: string | null;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  reads: number;
  entries: number;
  written: number;
  deleted: number;
  /** When it failed: why (no secret in it). */
  error?: { code: string; message: string };
}

/** Per twin: when the last refresh started (wall ms, for the throttle and the schedule), the last completed and the last attempt. */
interface RefreshState {
  startedWallMs?: number;
  /** When the root was set (wall ms): the schedule counts from it until the first refresh. */
  rootSetWallMs?: number;
  last?: RefreshReport;
  lastAttempt?: RefreshReport;
}

function markerId(type: string, id: string): string | null {
  const marker = `${type} ${id}`;
  return marker.length <= MAX_MARKER_ID ? marker : null;
}

function hashOf(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('base64url');
}

function credentialContext(world: string, name: string): string {
  return `twinkit credential\u0000${world}\u0000${name}`;
}

export class RootSet {
  private readonly roots = new Map<string, RootConfig | null>();
  private readonly refreshes = new Map<string, RefreshState>();
  private readonly running = new Set<string>();
  /** The next scheduled refresh while the world is open (a host that closes it wakes it at `nextDueMs`). */
  private timer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;

  constructor(
    private readonly host: RootHost,
    private readonly options: RootOptions,
  ) {}

  /** Sets the timer for the earliest scheduled refresh, if any. */
  schedule(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const next = this.closed ? null : this.nextDueMs();
    if (next === null) return;
    const delay = Math.min(Math.max(0, next - this.host.wallClock()), 2 ** 31 - 1);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.performDue().finally(() => this.schedule());
    }, delay);
    unrefTimer(this.timer);
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  get loopback(): boolean {
    return this.options.loopback === true;
  }

  private key(kind: string, ...rest: string[]): Key {
    return ['#runner', this.host.name, kind, ...rest];
  }

  // ------------------------------------------------------------ root

  root(vendor: string): RootConfig | null {
    let root = this.roots.get(vendor);
    if (root === undefined) {
      root = this.host.storage.get<RootConfig>(this.key('root', vendor)) ?? null;
      this.roots.set(vendor, root);
    }
    return root;
  }

  putRoot(vendor: string, body: unknown): RootConfig | null {
    const twin = this.host.twin(vendor);
    if (body !== null && twin.manifest.root === undefined) throw new KitError('invalid_root', `Twin '${vendor}' keeps no copy of a real vendor: its manifest declares no root.`);
    const root = parseRoot(body, this.loopback);
    const state = this.refreshState(vendor);
    this.host.storage.transact((tx) => {
      if (root === null) {
        tx.remove(this.key('root', vendor));
        tx.remove(this.key('refresh', vendor));
      } else {
        tx.put(this.key('root', vendor), root);
        tx.put(this.key('refresh', vendor), { ...state, rootSetWallMs: this.host.wallClock() });
      }
    });
    this.roots.set(vendor, root);
    this.refreshes.delete(vendor);
    this.schedule();
    return root;
  }

  // ------------------------------------------------------------ credentials

  /** A twin's or a link's name (`links` answers whether a link has it). */
  private credentialOwner(name: string, isLink: (name: string) => boolean): void {
    if (!this.host.twins.has(name) && !isLink(name)) throw new KitError('unknown_twin', `This world has no twin or link '${name.slice(0, 60)}' to seal a credential for.`);
  }

  async putCredential(name: string, bodyText: string, body: unknown, isLink: (name: string) => boolean): Promise<{ sealed: true; sealedAt: string }> {
    this.credentialOwner(name, isLink);
    const secret = parseCredential(body, new TextEncoder().encode(bodyText).length);
    const sealer = this.sealer();
    const box = await sealer.seal(JSON.stringify(secret), credentialContext(this.host.name, name));
    const stored: StoredCredential = { box, sealedAt: new Date(this.host.wallClock()).toISOString() };
    this.host.storage.transact((tx) => tx.put(this.key('credential', name), stored));
    return { sealed: true, sealedAt: stored.sealedAt };
  }

  credential(name: string, isLink: (name: string) => boolean): { sealed: boolean; sealedAt: string | null } {
    this.credentialOwner(name, isLink);
    return this.credentialStatus(name);
  }

  credentialStatus(name: string): { sealed: boolean; sealedAt: string | null } {
    const stored = this.host.storage.get<StoredCredential>(this.key('credential', name));
    return stored === undefined ? { sealed: false, sealedAt: null } : { sealed: true, sealedAt: stored.sealedAt };
  }

  deleteCredential(name: string, isLink: (name: string) => boolean): void {
    this.credentialOwner(name, isLink);
    this.host.storage.transact((tx) => tx.remove(this.key('credential', name)));
  }

  /** The credential sealed for `name`, opened; null when none is. */
  async openCredential(name: string): Promise<CredentialSecret | null> {
    const stored = this.host.storage.get<StoredCredential>(this.key('credential', name));
    if (stored === undefined) return null;
    return JSON.parse(await this.sealer().open(stored.box, credentialContext(this.host.name, name))) as CredentialSecret;
  }

  private sealer(): Sealer {
    if (this.options.sealer === undefined) throw new KitError('sealing_unavailable', 'This host has no sealing key, so it seals no credential (a local world keeps one beside .kit/; the edge variant reads the SEALING_KEY secret).');
    return this.options.sealer;
  }

  outbound(): OutboundFetch {
    if (this.options.outbound === undefined) throw new KitError('outbound_failed', 'This world was opened without a way to reach a vendor (no outbound capability).');
    return this.options.outbound;
  }

  // ------------------------------------------------------------ status

  private refreshState(vendor: string): RefreshState {
    let state = this.refreshes.get(vendor);
    if (state === undefined) {
      state = this.host.storage.get<RefreshState>(this.key('refresh', vendor)) ?? {};
      this.refreshes.set(vendor, state);
    }
    return state;
  }

  private saveRefreshState(vendor: string, state: RefreshState): void {
    this.refreshes.set(vendor, state);
    if (this.host.storage.alive) this.host.storage.transact((tx) => tx.put(this.key('refresh', vendor), state));
  }

  /** `x-kit-observed-at` for a rooted twin's answers: the last completed refresh's instant, or undefined. */
  observedAt(vendor: string): string | undefined {
    if (this.root(vendor) === null) return undefined;
    return this.refreshState(vendor).last?.observedAt ?? undefined;
  }

  /** The root's parts of a twin's status. */
  status(vendor: string): Record<string, unknown> {
    const root = this.root(vendor);
    const state = this.refreshState(vendor);
    const next = root === null ? null : this.nextRefreshMs(vendor, root);
    return {
      root,
      credential: this.credentialStatus(vendor),
      lastRefresh: root === null ? null : (state.last ?? null),
      lastRefreshAttempt: root === null ? null : (state.lastAttempt ?? null),
      nextRefreshAt: next === null ? null : new Date(next).toISOString(),
    };
  }

  // ------------------------------------------------------------ refresh

  private durationOf(vendor: string, root: RootConfig, field: 'atMost' | 'every'): number | null {
    const given = root.refresh[field] ?? this.host.twin(vendor).manifest.root?.refresh[field];
    if (given === undefined) return field === 'atMost' ? parseDuration(DEFAULT_AT_MOST) : null;
    return parseDuration(given);
  }

  /** When a rooted twin's scheduled refresh falls due (wall ms), or null when it has none. */
  private nextRefreshMs(vendor: string, root: RootConfig): number | null {
    const every = this.durationOf(vendor, root, 'every');
    if (every === null) return null;
    const state = this.refreshState(vendor);
    const from = state.startedWallMs ?? state.rootSetWallMs;
    return from === undefined ? null : from + every;
  }

  /** The earliest scheduled refresh of any twin (wall ms), or null. */
  nextDueMs(): number | null {
    let earliest = Infinity;
    for (const vendor of this.host.twins.keys()) {
      const root = this.root(vendor);
      if (root === null) continue;
      const next = this.nextRefreshMs(vendor, root);
      if (next !== null) earliest = Math.min(earliest, next);
    }
    return Number.isFinite(earliest) ? earliest : null;
  }

  /** Performs every scheduled refresh that fell due; a failure is recorded in the twin's status, not thrown. Answers how many ran. */
  async performDue(): Promise<number> {
    let ran = 0;
    for (const vendor of this.host.twins.keys()) {
      const root = this.root(vendor);
      const next = root === null ? null : this.nextRefreshMs(vendor, root);
      if (this.closed || next === null || next > this.host.wallClock() || this.running.has(vendor)) continue;
      ran++;
      try {
        await this.refresh(vendor, true);
      } catch (e) {
        if (!isKitError(e)) console.error(`twinkit: the scheduled refresh of ${vendor} failed`, e);
      }
    }
    return ran;
  }

  /**
   * Observes the twin's root now: `root.start`, then each read performed with the sealed
   * credential and handed to `root.read`, one entry per call; then, the refresh complete, what
   * the root no longer has is deleted. Throttled to `refresh.atMost` unless `force`; one at a
   * time per twin.
   */
  async refresh(vendor: string, force: boolean): Promise<RefreshReport> {
    const twin = this.host.twin(vendor);
    const root = this.root(vendor);
    if (root === null) throw new KitError('no_root', `Twin '${vendor}' has no root: PUT …/twins/${vendor}/root first.`);
    if (this.running.has(vendor)) throw new KitError('refresh_in_progress', `A refresh of '${vendor}' is running; its answer comes when it ends.`);
    const now = this.host.wallClock();
    const state = this.refreshState(vendor);
    const atMost = this.durationOf(vendor, root, 'atMost')!;
    if (!force && state.startedWallMs !== undefined && now - state.startedWallMs < atMost) {
      const retryAfterS = Math.ceil((state.startedWallMs + atMost - now) / 1000);
      throw new KitError('refresh_throttled', `'${vendor}' was refreshed less than ${root.refresh.atMost ?? twin.manifest.root?.refresh.atMost ?? DEFAULT_AT_MOST} ago; try again in ${retryAfterS} s, or add ?force=1.`, { retryAfterS });
    }
    this.running.add(vendor);
    this.saveRefreshState(vendor, { ...state, startedWallMs: now });
    const tally = { reads: 0, entries: 0, written: 0, deleted: 0 };
    let credential: CredentialSecret | null = null;
    let report: RefreshReport;
    try {
      credential = await this.openCredential(vendor);
      const observedAt = await this.observe(twin, root, credential, tally);
      report = { ok: true, observedAt, ...this.times(now), ...tally };
      this.saveRefreshState(vendor, { ...this.refreshState(vendor), last: report, lastAttempt: report });
      return report;
    } catch (e) {
      const err = isKitError(e) ? e : new KitError('refresh_failed', `The refresh failed: ${e instanceof Error ? e.message : String(e)}`);
      const message = scrubSecrets(err.message, credential);
      report = { ok: false, observedAt: null, ...this.times(now), ...tally, error: { code: err.code, message } };
      this.saveRefreshState(vendor, { ...this.refreshState(vendor), lastAttempt: report });
      if (!isKitError(e)) console.error(`twinkit: the refresh of ${vendor} failed`, e);
      // What it wrote before it failed stays (nothing is swept): on disk before the answer says so.
      await this.host.durable();
      throw new KitError(err.code, message, { refresh: report });
    } finally {
      this.running.delete(vendor);
    }
  }

  private times(startedMs: number): Pick<RefreshReport, 'startedAt' | 'finishedAt' | 'durationMs'> {
    const end = this.host.wallClock();
    return { startedAt: new Date(startedMs).toISOString(), finishedAt: new Date(end).toISOString(), durationMs: end - startedMs };
  }

  /** The refresh's reads and entries; answers the instant it completed at. */
  private async observe(twin: ServedTwin, root: RootConfig, credential: CredentialSecret | null, tally: { reads: number; entries: number; written: number; deleted: number }): Promise<string> {
    const vendor = twin.vendor;
    const info = { url: root.url };
    const started = await this.host.invokeGuest(twin, { kind: 'root.start', root: info });
    if (started.thrown) throw new KitError('refresh_failed', `The twin's root.start threw: ${started.thrown.message}`);
    const queue: RootRead[] = [...((started.response?.body as RootRead[] | undefined) ?? [])];
    const seen = new Set<string>();
    const appended: Entry[] = [];
    const fetch = this.outbound();
    while (queue.length > 0) {
      if (tally.reads >= MAX_READS) throw new KitError('refresh_failed', `The refresh asked for more than ${MAX_READS} reads; it stops there.`);
      const read = queue.shift()!;
      const url = readUrl(root.url, read);
      tally.reads++;
      const got = await callVendor(fetch, { method: 'GET', url, headers: { accept: 'application/json', 'user-agent': 'twinkit-refresh/1', ...lowerCase(read.headers) } }, credential, { timeoutMs: READ_TIMEOUT_MS, maxBytes: MAX_ANSWER_BYTES });
      const answer = answerOf(got.status, got.headers, got.body);
      const next = await this.host.exclusive(vendor, async () => {
        const out = await this.host.invokeGuest(twin, { kind: 'root.read', root: info, read, answer });
        if (out.thrown) throw new KitError('refresh_failed', `The twin's root.read threw on ${describeRead(read)} (answered ${answer.status}): ${out.thrown.message}`);
        const writes = this.fold(vendor, out.writes, seen);
        if (writes.length > 0) {
          appended.push(this.host.appendEntry(vendor, { cause: { kind: 'refresh' }, writes }));
          tally.entries++;
          tally.written += writes.filter((w) => w.type !== MARKER_TYPE).length;
        }
        return (out.response?.body as RootRead[] | undefined) ?? [];
      });
      queue.push(...next);
    }
    await this.host.exclusive(vendor, async () => {
      for (const draft of this.sweep(vendor, seen)) {
        appended.push(this.host.appendEntry(vendor, draft));
        tally.entries++;
        tally.deleted += draft.writes.filter((w) => w.type !== MARKER_TYPE).length;
      }
    });
    await this.host.durable();
    return appended.length > 0 ? appended[appended.length - 1]!.occurredAt : new Date(this.host.world.stampMs(vendor)).toISOString();
  }

  /** A root call's writes with the markers that go beside them; a record whose root value is unchanged since last seen is left as the world has it. */
  private fold(vendor: string, writes: RecordWrite[], seen: Set<string> | null): RecordWrite[] {
    const world = this.host.world;
    const out: RecordWrite[] = [];
    for (const w of writes) {
      const marker = w.type.startsWith('__') ? null : markerId(w.type, w.id);
      if (marker === null) {
        out.push(w);
        continue;
      }
      seen?.add(marker);
      const known = world.getRecord<{ hash?: string }>(vendor, MARKER_TYPE, marker);
      if (w.value === null) {
        if (world.getRecord(vendor, w.type, w.id) !== undefined) out.push(w);
        if (known !== undefined) out.push({ type: MARKER_TYPE, id: marker, value: null });
        continue;
      }
      const hash = hashOf(w.value);
      if (known?.hash === hash) continue;
      const current = world.getRecord(vendor, w.type, w.id);
      if (current === undefined || hashOf(current) !== hash) out.push(w);
      out.push({ type: MARKER_TYPE, id: marker, value: { type: w.type, id: w.id, hash } });
    }
    return out;
  }

  /** Entries deleting every record a marker names that this refresh did not see. */
  private sweep(vendor: string, seen: Set<string>): EntryDraft[] {
    const world = this.host.world;
    const gone: RecordWrite[] = [];
    let after: string | undefined;
    for (;;) {
      const page = world.listRecords<{ type: string; id: string }>(vendor, MARKER_TYPE, { ...(after !== undefined ? { after } : {}), limit: 1000 });
      for (const { id, value } of page.records) {
        if (seen.has(id)) continue;
        if (world.getRecord(vendor, value.type, value.id) !== undefined) gone.push({ type: value.type, id: value.id, value: null });
        gone.push({ type: MARKER_TYPE, id, value: null });
      }
      if (!page.hasMore || page.records.length === 0) break;
      after = page.records[page.records.length - 1]!.id;
    }
    const drafts: EntryDraft[] = [];
    for (let i = 0; i < gone.length; i += SWEEP_CHUNK * 2) drafts.push({ cause: { kind: 'refresh' }, writes: gone.slice(i, i + SWEEP_CHUNK * 2) });
    return drafts;
  }

  // ------------------------------------------------------------ ingest

  /**
   * `POST …/twins/<vendor>/ingest`: a vendor webhook, verified with the sealed signing secret as
   * the vendor signs it, refused when replayed, then folded by the twin's `root.ingest.event`
   * into one entry caused by the ingest. An unverified one is stored nowhere.
   */
  async ingest(vendor: string, headers: Record<string, string>, bodyBytes: Uint8Array): Promise<{ received: true; event: string; position: number | null }> {
    const twin = this.host.twin(vendor);
    const scheme = twin.manifest.root?.ingest;
    if (scheme === undefined) throw new KitError('no_ingest', `Twin '${vendor}' takes no webhooks.`);
    const root = this.root(vendor);
    if (root === null) throw new KitError('no_root', `Twin '${vendor}' has no root, so it folds no webhooks.`);
    const credential = await this.openCredential(vendor);
    if (credential?.signingSecret === undefined) throw new KitError('no_credential', `No signing secret is sealed for '${vendor}': PUT …/twins/${vendor}/credential with signingSecret.`);
    const bodyText = new TextDecoder().decode(bodyBytes);
    const verdict = scheme === 'stripe' ? verifyStripe(headers['stripe-signature'], bodyText, credential.signingSecret, Math.floor(this.host.wallClock() / 1000)) : verifyGithub(headers['x-hub-signature-256'], bodyBytes, credential.signingSecret);
    if (!verdict.ok) throw new KitError(verdict.code, `The webhook is refused: ${verdict.reason}.`);
    let body: unknown;
    try {
      body = JSON.parse(bodyText);
    } catch {
      throw new KitError('invalid_json', 'The webhook is signed but its body is not JSON.');
    }
    const event = eventIdOf(scheme, headers, body, bodyBytes);
    const spentKey = this.key('ingested', vendor, event);
    const position = await this.host.exclusive(vendor, async () => {
      if (this.host.storage.get(spentKey) !== undefined) throw new KitError('webhook_replayed', `The webhook ${event.slice(0, 80)} was folded already.`);
      const out = await this.host.invokeGuest(twin, { kind: 'root.ingest', root: { url: root.url }, webhook: { headers: vendorHeaders(headers), body, bodyText } });
      if (out.thrown) throw new KitError('handler_error', `The twin could not fold the webhook: ${out.thrown.message}`);
      const writes = this.fold(vendor, out.writes, null);
      const entry = writes.length > 0 ? this.host.appendEntry(vendor, { cause: { kind: 'ingest', source: `${scheme}:${event}` }, writes }) : null;
      this.host.storage.transact((tx) => tx.put(spentKey, { at: this.host.wallClock() }));
      return entry?.position ?? null;
    });
    await this.host.durable();
    return { received: true, event, position };
  }
}

/** The event's id, for refusing a replay: Stripe's `evt_…`, GitHub's delivery id (else the body's hash). */
function eventIdOf(scheme: 'stripe' | 'github', headers: Record<string, string>, body: unknown, bytes: Uint8Array): string {
  if (scheme === 'stripe') {
    const id = (body as { id?: unknown } | null)?.id;
    if (typeof id === 'string' && /^[A-Za-z0-9_]{1,255}$/.test(id)) return id;
  } else {
    const delivery = headers['x-github-delivery'];
    if (delivery !== undefined && /^[A-Za-z0-9-]{1,255}$/.test(delivery)) return delivery;
  }
  return `sha256-${createHash('sha256').update(bytes).digest('hex')}`;
}

/** A webhook's headers as the twin sees them: none of the host's own. */
function vendorHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (!name.startsWith('x-kit-') && name !== 'cookie' && name !== 'authorization' && name !== 'x-twins-key') out[name] = value;
  return out;
}

function lowerCase(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers !== undefined) for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value;
  return out;
}

function describeRead(read: RootRead): string {
  return read.path.slice(0, 200);
}

/**
 * The URL of one read: a path below the root's URL, or an absolute URL on the root's own
 * origin (a `Link` header's next page); anything else is refused, so a twin cannot send the
 * credential elsewhere.
 */
export function readUrl(rootUrl: string, read: RootRead): string {
  const base = new URL(rootUrl);
  let url: URL;
  if (/^[a-z][a-z0-9+.-]*:/i.test(read.path)) {
    url = new URL(read.path);
    if (url.origin !== base.origin) throw new KitError('refresh_failed', `The twin asked to read ${url.origin}, outside its root's origin ${base.origin}; refused.`);
  } else {
    const path = read.path.startsWith('/') ? read.path : `/${read.path}`;
    url = new URL(base.href.replace(/\/$/, '') + path);
    if (url.origin !== base.origin) throw new KitError('refresh_failed', 'The twin asked for a read outside its root; refused.');
  }
  if (read.query !== undefined) for (const [name, value] of Object.entries(read.query)) url.searchParams.set(name, value);
  url.hash = '';
  return url.href;
}

function answerOf(status: number, headers: Record<string, string>, body: Uint8Array): RootAnswer {
  const bodyText = new TextDecoder().decode(body);
  let parsed: unknown;
  const type = headers['content-type'] ?? '';
  if (type.includes('json') || /^\s*[[{]/.test(bodyText)) {
    try {
      parsed = JSON.parse(bodyText);
    } catch {
      parsed = undefined;
    }
  }
  return { status, headers, body: parsed, bodyText };
}
