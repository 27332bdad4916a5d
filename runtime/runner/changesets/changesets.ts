/**
 * A world's changesets (docs/changesets.md): its own vendor-API changes cut into a reviewed
 * list with a base and a hash, pushed into another world (appended only onto the base they
 * were cut on), verified by the world's checks, approved with the world's signature, and
 * deployed to each twin's root through the host's outbound fetch, with receipts. The origin's
 * side (bringing history in, pull with a three-way merge, push) is origins.ts.
 */
import { KitError, isKitError } from '../../errors.js';
import { callVendor, scrubSecrets } from '../../roots/vendor-call.js';
import type { Sealer } from '../../roots/sealing.js';
import { checkDraft } from '../../world/validate.js';
import type { Entry, EntryDraft } from '../../world/types.js';
import type { ChangesetHost } from '../services.js';
import { checkMessage, checkName, hashOf, readPushedChangeset } from './body.js';
import { idsLearnt, mappedBody, targetUrl, withheldSecrets } from './deploy.js';
import { approvalPayload, SigningKeys } from './signing.js';
import { ChangesetStore, type Bookkeeping } from './store.js';
import type { Approval, Change, DeployedState, Receipt, RecordChange, StoredChangeset, Verification } from './types.js';

const DEPLOY_TIMEOUT_MS = 30_000;
const DEPLOY_MAX_BYTES = 8 * 1024 * 1024;
/** What a receipt keeps of the root's answer. */
const RECEIPT_ANSWER_BYTES = 16 * 1024;
const MAX_VERIFICATIONS = 20;
const MAX_APPROVALS = 100;
const PERSON = /^[^\u0000-\u001f\u007f]{1,200}$/;

export interface ChangesetOptions {
  sealer?: Sealer;
}

/** A changeset as the world API answers it. */
export type ChangesetView = Omit<StoredChangeset, 'verifications' | 'approvals' | 'seq' | 'origin'> & {
  currentHash: string;
  cut: boolean;
  deployed: DeployedState;
  verification: (Verification & { current: boolean }) | null;
  verifications: (Verification & { current: boolean })[];
  approvals: (Approval & { current: boolean })[];
};

/** A changeset in a list: its changes counted, its receipts without the root's answers. */
export type ChangesetRow = Omit<ChangesetView, 'changes' | 'receipts'> & {
  changeCount: number;
  twins: string[];
  states: Record<Change['state'], number>;
  receipts: Omit<Receipt, 'answer'>[];
};

export class ChangesetSet {
  readonly store: ChangesetStore;
  readonly signing: SigningKeys;

  constructor(
    private readonly host: ChangesetHost,
    options: ChangesetOptions = {},
  ) {
    this.store = new ChangesetStore(host.storage, host.name);
    this.signing = new SigningKeys(host.storage, this.store.signingKeyKey(), options.sealer, `${host.name}\nsigning-key`);
  }

  // ------------------------------------------------------------ bookkeeping

  /** A branch starts matching its parent at the cut; any other world at its beginning. */
  bookkeeping(): Bookkeeping {
    return this.store.bookkeeping(() => {
      const base = this.host.world.base();
      const cutThrough: Record<string, number> = {};
      if (base !== null) for (const [twin, p] of Object.entries(base.positions)) cutThrough[twin] = p;
      return {
        seq: 0,
        cutThrough,
        origin:
          base === null
            ? null
            : {
                kind: 'parent',
                url: null,
                api: null,
                world: base.world,
                token: null,
                since: base.at,
                synced: Object.fromEntries(Object.entries(base.positions).map(([t, p]) => [t, { ours: p, theirs: p }])),
              },
        mergeBase: {},
      };
    });
  }

  private now(): string {
    return new Date(this.host.world.nowMs()).toISOString();
  }

  // ------------------------------------------------------------ reading

  get(name: string): StoredChangeset {
    const c = typeof name === 'string' && name.length <= 64 ? this.store.get(name) : undefined;
    if (c === undefined) throw new KitError('unknown_changeset', `This world has no changeset '${String(name).slice(0, 64)}'.`);
    return c;
  }

  view(c: StoredChangeset): ChangesetView {
    const currentHash = hashOf(c);
    const { verifications, approvals, seq: _seq, origin, ...rest } = c;
    void _seq;
    const marked = verifications.map((v) => ({ ...v, current: v.hash === currentHash }));
    return {
      ...rest,
      currentHash,
      cut: origin === 'cut',
      deployed: deployedState(c),
      verification: marked[0] ?? null,
      verifications: marked,
      approvals: approvals.map((a) => ({ ...a, current: a.hash === currentHash })),
    };
  }

  /**
   * Every changeset as a row: all but its changes (counted, with the twins they touch) and its
   * receipts' answers, so a list stays small however large the changesets; `…/changesets/<name>`
   * answers one whole.
   */
  list(): { changesets: ChangesetRow[]; publicKey: { jwk: JsonWebKey; keyId: string } | null; unpushed: Record<string, number> } {
    const rows = this.store.all().reverse().map((c): ChangesetRow => {
      const { changes, receipts, ...rest } = this.view(c);
      const states = { landed: 0, deployed: 0, failed: 0 };
      for (const ch of changes) states[ch.state]++;
      return { ...rest, changeCount: changes.length, twins: [...new Set(changes.map((ch) => ch.twin))].sort(), states, receipts: receipts.map(({ answer: _answer, ...r }) => r) };
    });
    return { changesets: rows, publicKey: this.signing.publicKey(), unpushed: this.unpushedCounts() };
  }

  /** How many own changes each twin has since the last cut (counted, not read whole). */
  unpushedCounts(): Record<string, number> {
    const book = this.bookkeeping();
    const out: Record<string, number> = {};
    for (const twin of [...this.host.twins.keys()].sort()) {
      let after = book.cutThrough[twin] ?? 0;
      let n = 0;
      for (;;) {
        const page = this.host.world.log(twin, { after, limit: 1000 });
        for (const entry of page.entries) if (this.isOwnChange(entry)) n++;
        if (page.next === null || page.entries.length === 0) break;
        after = page.entries[page.entries.length - 1]!.position;
      }
      if (n > 0) out[twin] = n;
    }
    return out;
  }

  // ------------------------------------------------------------ cutting

  /** Whether an entry is one of the world's own vendor-API changes. */
  private isOwnChange(entry: Entry): boolean {
    const cause = entry.cause;
    return cause.kind === 'request' && entry.writes.length > 0 && !cause.route.startsWith('scenario ');
  }

  /**
   * The world's own changes since its last cut, oldest first, each with what it wrote record by
   * record; a merge pulled in since then folded into the last change that wrote the record.
   */
  unpushedChanges(): { changes: Change[]; through: Record<string, number> } {
    const book = this.bookkeeping();
    const changes: Change[] = [];
    const through: Record<string, number> = {};
    for (const twin of [...this.host.twins.keys()].sort()) {
      const last = new Map<string, RecordChange>();
      let after = book.cutThrough[twin] ?? 0;
      through[twin] = this.host.world.head(twin);
      for (;;) {
        const page = this.host.world.log(twin, { after, limit: 500 });
        for (const entry of page.entries) {
          if (this.isOwnChange(entry)) {
            const change = this.changeOf(twin, entry);
            for (const w of change.writes) last.set(`${w.type}/${w.id}`, w);
            changes.push(change);
          } else if (entry.cause.kind === 'pull' && entry.cause.merged) {
            for (const w of entry.writes) {
              const mine = last.get(`${w.type}/${w.id}`);
              if (mine !== undefined) mine.after = w.value;
            }
          }
          after = entry.position;
        }
        if (page.next === null || page.entries.length === 0) break;
      }
    }
    changes.sort((a, b) => (a.occurredAt < b.occurredAt ? -1 : a.occurredAt > b.occurredAt ? 1 : a.twin < b.twin ? -1 : a.twin > b.twin ? 1 : a.position! - b.position!));
    changes.forEach((c, i) => (c.index = i));
    return { changes, through };
  }

  private changeOf(twin: string, entry: Entry): Change {
    const cause = entry.cause as Extract<Entry['cause'], { kind: 'request' }>;
    const exchange = this.store.exchange(twin, entry.position);
    const seen = new Map<string, unknown>();
    const writes: RecordChange[] = entry.writes.map((w) => {
      const key = `${w.type}/${w.id}`;
      const before = seen.has(key) ? seen.get(key) : (this.host.world.getRecord(twin, w.type, w.id, entry.position - 1) ?? null);
      seen.set(key, w.value);
      return { type: w.type, id: w.id, before, after: w.value };
    });
    let answer: unknown = null;
    if (exchange?.answer) {
      try {
        answer = JSON.parse(exchange.answer);
      } catch {
        answer = null;
      }
    }
    return {
      index: 0,
      twin,
      request: {
        method: cause.method,
        path: vendorPath(twin, cause.path),
        query: exchange?.query ?? '',
        contentType: exchange?.contentType ?? null,
        ...(exchange?.headers ? { headers: exchange.headers } : {}),
        body: exchange?.body ?? '',
      },
      status: cause.status,
      answer,
      writes,
      occurredAt: entry.occurredAt,
      state: 'landed',
      position: entry.position,
    };
  }

  /** `POST …/changesets`: the unpushed changes cut into a changeset. */
  cut(body: unknown): Promise<ChangesetView> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new KitError('invalid_changeset', 'Send { "message": "…", "name"?: "…" }.');
    const fields = body as Record<string, unknown>;
    for (const k of Object.keys(fields)) if (k !== 'message' && k !== 'name') throw new KitError('invalid_changeset', `A cut takes message and name, not '${k.slice(0, 40)}'.`, { param: k.slice(0, 40) });
    const message = checkMessage(fields['message']);
    const given = fields['name'] === undefined ? undefined : checkName(fields['name']);
    return this.host.exclusive(CHANGESETS_KEY, async () => {
      const book = this.bookkeeping();
      const { changes, through } = this.unpushedChanges();
      if (changes.length === 0) throw new KitError('nothing_to_cut', 'This world has no changes of its own since its last changeset.');
      const name = given ?? this.freeName(book.seq);
      if (this.store.get(name) !== undefined) throw new KitError('changeset_exists', `This world already has a changeset '${name}'.`);
      const base = this.baseFor(book, changes);
      const cs: StoredChangeset = {
        name,
        message,
        cutAt: this.now(),
        from: this.host.name,
        base,
        changes,
        contentHash: '',
        origin: 'cut',
        landedAt: null,
        pushed: null,
        verifications: [],
        approvals: [],
        receipts: [],
        seq: book.seq + 1,
      };
      cs.contentHash = hashOf(cs);
      this.store.saveBookkeeping({ ...book, seq: book.seq + 1, cutThrough: { ...book.cutThrough, ...through } });
      this.store.save(cs);
      await this.host.durable();
      return this.view(cs);
    });
  }

  private freeName(seq: number): string {
    for (let n = seq + 1; ; n++) if (this.store.get(`cs-${n}`) === undefined) return `cs-${n}`;
  }

  /**
   * Where the changes apply in the world they are pushed to: the origin's position this world
   * last matched, moved on by the changes cut before and not pushed yet (a push appends one
   * entry per change). A world with no origin names its own position before its first change.
   */
  private baseFor(book: Bookkeeping, changes: Change[]): Record<string, number> {
    const base: Record<string, number> = {};
    const pending = this.store.all().filter((c) => c.origin === 'cut' && c.pushed === null);
    for (const change of changes) {
      if (change.twin in base) continue;
      const synced = book.origin?.synced[change.twin];
      if (synced === undefined) base[change.twin] = change.position! - 1;
      else base[change.twin] = synced.theirs + pending.reduce((n, c) => n + c.changes.filter((x) => x.twin === change.twin).length, 0);
    }
    return base;
  }

  // ------------------------------------------------------------ pushing

  /** `POST …/push`: a changeset from another world, appended whole onto its base, or refused. */
  async receive(body: unknown): Promise<{ status: number; body: unknown }> {
    const read = readPushedChangeset(body, new Set(this.host.twins.keys()));
    const twins = [...new Set(read.changes.map((c) => c.twin))].sort();
    const appended = await this.holdAll(twins, async () => {
      if (this.store.get(read.name) !== undefined) throw new KitError('changeset_exists', `This world already has a changeset '${read.name}' (pushed twice?).`);
      const drift: Record<string, { base: number; current: number }> = {};
      for (const twin of twins) {
        const current = this.host.world.head(twin);
        if (current !== read.base[twin]) drift[twin] = { base: read.base[twin]!, current };
      }
      if (Object.keys(drift).length > 0) {
        throw new KitError('base_not_current', `The changeset was cut on positions this world has moved past (${Object.entries(drift).map(([t, d]) => `${t}: ${d.base} → ${d.current}`).join(', ')}); pull and cut again.`, { drift });
      }
      // Every draft checked before any is appended: all twins land, or none.
      const drafts = new Map<string, EntryDraft[]>();
      for (const change of read.changes) {
        const draft = checkDraft({
          cause: { kind: 'push', changeset: read.name, change: change.index, method: change.request.method, route: `${change.request.method} ${change.request.path}`, path: change.request.path, status: change.status },
          writes: change.writes.map((w) => ({ type: w.type, id: w.id, value: w.after })),
        });
        const list = drafts.get(change.twin) ?? [];
        list.push(draft);
        drafts.set(change.twin, list);
      }
      const positions = new Map<string, number[]>();
      for (const [twin, list] of drafts) positions.set(twin, this.host.appendEntries(twin, list).map((e) => e.position));
      const book = this.bookkeeping();
      const counters = new Map<string, number>();
      const changes = read.changes.map((c) => {
        const i = counters.get(c.twin) ?? 0;
        counters.set(c.twin, i + 1);
        return { ...c, position: positions.get(c.twin)![i]! };
      });
      const cs: StoredChangeset = { ...read, changes, origin: 'landed', landedAt: this.now(), pushed: null, verifications: [], approvals: [], receipts: [], seq: book.seq + 1 };
      this.store.saveBookkeeping({ ...book, seq: book.seq + 1 });
      this.store.save(cs);
      await this.host.durable();
      return Object.fromEntries([...positions].map(([t, p]) => [t, [p[0]!, p[p.length - 1]!]]));
    });
    const cs = this.get(read.name);
    const answer: Record<string, unknown> = { changeset: this.view(cs), appended };
    const auto = twins.some((t) => this.host.roots.root(t)?.deploy === 'auto');
    if (auto) {
      const verification = await this.verify(read.name);
      answer['verification'] = verification;
      if (verification.pass) {
        try {
          answer['deployed'] = await this.deployOne(read.name);
        } catch (e) {
          if (!isKitError(e)) throw e;
          answer['deployed'] = { changeset: read.name, error: e.toBody().error, receipts: this.get(read.name).receipts };
        }
      }
      answer['changeset'] = this.view(this.get(read.name));
    }
    return { status: 201, body: answer };
  }

  /** Runs `work` holding each twin in turn (sorted, so two pushes never wait on each other). */
  holdAll<T>(twins: string[], work: () => Promise<T>): Promise<T> {
    const [first, ...rest] = twins;
    if (first === undefined) return this.host.exclusive(CHANGESETS_KEY, work);
    return this.host.exclusive(first, () => this.holdAll(rest, work));
  }

  // ------------------------------------------------------------ verifying and approving

  /** `POST …/changesets/<name>/verify`: every check over every change, recorded against the current hash. */
  async verify(name: string): Promise<Verification & { current: boolean }> {
    const cs = this.get(name);
    const hash = hashOf(cs);
    const failures: Verification['failures'] = [];
    let checks = 0;
    for (const change of cs.changes) {
      const entry: Entry = {
        position: change.position ?? change.index + 1,
        occurredAt: change.occurredAt || cs.cutAt,
        cause: { kind: 'push', changeset: cs.name, change: change.index, method: change.request.method, route: `${change.request.method} ${change.request.path}`, path: change.request.path, status: change.status },
        writes: change.writes.map((w) => ({ type: w.type, id: w.id, value: w.after })),
      };
      const results = await this.host.runChecks(change.twin, entry);
      checks = Math.max(checks, results.length);
      for (const r of results) if (!r.pass) failures.push({ change: change.index, twin: change.twin, check: r.check, failures: r.failures.slice(0, 20) });
    }
    const verification: Verification = { hash, at: this.now(), pass: failures.length === 0, checks, changes: cs.changes.length, failures };
    await this.update(name, (c) => ({ ...c, verifications: [verification, ...c.verifications].slice(0, MAX_VERIFICATIONS) }));
    return { ...verification, current: true };
  }

  /** `POST …/changesets/<name>/approve`: the world's signature over the current hash. */
  async approve(name: string, body: unknown, who: string | undefined): Promise<Approval & { current: boolean }> {
    const cs = this.get(name);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new KitError('bad_request', 'Send { "as": "<who approves>", "note"?: "…" }.');
    const fields = body as Record<string, unknown>;
    const as = who ?? fields['as'];
    if (typeof as !== 'string' || !PERSON.test(as)) throw new KitError('bad_request', "'as' names who approves (1 to 200 characters).", { param: 'as' });
    const note = fields['note'] === undefined || fields['note'] === null ? null : fields['note'];
    if (note !== null && (typeof note !== 'string' || note.length > 2000)) throw new KitError('bad_request', "'note' is text of at most 2000 characters.", { param: 'note' });
    const hash = hashOf(cs);
    if (hash !== cs.contentHash) {
      throw new KitError('changeset_hash_changed', `The changeset's body no longer matches the hash it was stored with (${cs.contentHash} → ${hash}): it was changed outside the world, so it is not approved.`, { contentHash: cs.contentHash, currentHash: hash });
    }
    const key = await this.signing.get();
    const at = this.now();
    const signature = await key.sign(approvalPayload({ world: this.host.name, changeset: name, hash, as, note: note as string | null, at }));
    const approval: Approval = { world: this.host.name, as, note: note as string | null, hash, at, signature, keyId: key.keyId };
    await this.update(name, (c) => ({ ...c, approvals: [...c.approvals, approval].slice(-MAX_APPROVALS) }));
    return { ...approval, current: true };
  }

  private update(name: string, change: (c: StoredChangeset) => StoredChangeset): Promise<void> {
    return this.host.exclusive(CHANGESETS_KEY, async () => {
      this.store.save(change(this.get(name)));
      await this.host.durable();
    });
  }

  // ------------------------------------------------------------ deploying

  /**
   * `POST …/deploy[/<name>]`: the changes not yet performed, oldest first, against each twin's
   * root. A browser session names what it deploys (`confirm`).
   */
  async deploy(name: string | null, body: unknown, credential: string | undefined): Promise<unknown> {
    if (credential === 'session') {
      const confirm = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)['confirm'] : undefined;
      const expected = name ?? this.host.name;
      // A world served alone (kit world serve) knows itself as `shop`; its page and its person as `acme/shop`.
      const worldNamed = name === null && typeof confirm === 'string' && !expected.includes('/') && confirm.endsWith(`/${expected}`);
      if (confirm !== expected && !worldNamed) throw new KitError('confirm_required', `A deploy from a browser sends { "confirm": "${expected}" } (${name === null ? "the world's name, for every changeset" : "the changeset's name"}).`, { param: 'confirm' });
    }
    if (name !== null) return this.deployOne(name);
    const deployed: unknown[] = [];
    for (const cs of this.store.all()) {
      if (deployedState(cs) === 'all') continue;
      deployed.push(await this.deployOne(cs.name));
    }
    return { deployed };
  }

  async deployOne(name: string): Promise<{ changeset: string; receipts: Receipt[]; deployed: DeployedState }> {
    return this.host.exclusive(DEPLOY_KEY, async () => {
      const cs = this.get(name);
      const hash = hashOf(cs);
      const verification = cs.verifications[0];
      if (verification === undefined || verification.hash !== hash) {
        throw new KitError('changeset_not_verified', `Changeset '${name}' has no verification of its current version; verify it first (POST …/changesets/${name}/verify).`);
      }
      if (!verification.pass) throw new KitError('verification_failed', `Changeset '${name}' failed its checks (${verification.failures.length} failing); it is not deployed.`, { failures: verification.failures.slice(0, 20) });
      for (const change of cs.changes) {
        if (change.state === 'deployed') continue;
        if (this.host.roots.root(change.twin) === null) throw new KitError('no_root', `Twin '${change.twin}' has no root to deploy to; set one with PUT …/twins/${change.twin}/root.`);
      }
      // Each receipt a record of its own (store.ts), and the id maps read once: a change costs
      // the same whatever the changeset's length.
      let next = this.store.receiptCount(name);
      const ids = new Map<string, Map<string, string>>();
      for (const change of cs.changes) {
        if (change.state === 'deployed') continue;
        let known = ids.get(change.twin);
        if (known === undefined) ids.set(change.twin, (known = this.store.ids(change.twin)));
        const receipt = await this.perform(cs, change, known);
        this.store.addReceipt(name, next++, receipt);
        await this.host.durable();
        if (!receipt.ok) {
          const now = this.get(name);
          throw new KitError('deploy_failed', `Change #${change.index + 1} of '${name}' (${change.request.method} ${change.request.path}) failed at the root: ${receipt.error}. The changes before it are performed; deploy again to go on from it.`, {
            changeset: name,
            receipts: now.receipts,
            deployed: deployedState(now),
          });
        }
      }
      const done = this.get(name);
      return { changeset: name, receipts: done.receipts, deployed: deployedState(done) };
    });
  }

  /** One change sent to its twin's root with the sealed credential; its receipt. */
  private async perform(cs: StoredChangeset, change: Change, ids: Map<string, string>): Promise<Receipt> {
    const root = this.host.roots.root(change.twin)!;
    const credential = await this.host.roots.openCredential(change.twin);
    // The same key for a retry of an attempt the root never answered (it may have performed it);
    // a new one after an answer, which the vendor keeps for the key (Stripe replays a saved 500).
    const answered = cs.receipts.filter((r) => r.change === change.index && r.status !== null).length;
    const idempotencyKey = `kit-${cs.contentHash.slice(7, 27)}-${change.index}${answered > 0 ? `-${answered}` : ''}`;
    const at = this.now();
    const base: Omit<Receipt, 'ok' | 'status' | 'answer' | 'error' | 'ids'> = { change: change.index, twin: change.twin, at, request: { method: change.request.method, url: '' }, idempotencyKey };
    if (credential === null) return { ...base, ok: false, status: null, ids: {}, answer: null, error: `twin '${change.twin}' has no sealed credential (no_credential)` };
    let url: string;
    try {
      url = targetUrl(root.url, change, ids);
    } catch (e) {
      return { ...base, ok: false, status: null, ids: {}, answer: null, error: (e as Error).message };
    }
    base.request.url = url;
    const headers: Record<string, string> = { accept: 'application/json', ...change.request.headers, 'user-agent': 'twinkit-deploy/1', 'idempotency-key': idempotencyKey };
    if (change.request.contentType !== null) headers['content-type'] = change.request.contentType;
    const body = mappedBody(change, ids);
    try {
      const answer = await callVendor(
        this.host.roots.outbound(),
        { method: change.request.method, url, headers, ...(body !== '' ? { body: new TextEncoder().encode(body) } : {}) },
        credential,
        { timeoutMs: DEPLOY_TIMEOUT_MS, maxBytes: DEPLOY_MAX_BYTES },
      );
      const text = scrubSecrets(new TextDecoder().decode(answer.body), credential);
      let parsed: unknown = text;
      try {
        parsed = text === '' ? null : JSON.parse(text);
      } catch {
        parsed = text;
      }
      const ok = answer.status >= 200 && answer.status < 300;
      const learnt = ok ? idsLearnt(change.request, change.answer, parsed) : {};
      if (ok) {
        this.store.saveIds(change.twin, learnt);
        for (const [mine, real] of Object.entries(learnt)) ids.set(mine, real);
      }
      const shown = withheldSecrets(parsed);
      const shownText = typeof shown === 'string' ? shown : JSON.stringify(shown);
      const kept = shownText.length <= RECEIPT_ANSWER_BYTES ? shown : `${shownText.slice(0, RECEIPT_ANSWER_BYTES)}…`;
      return { ...base, ok, status: answer.status, ids: learnt, answer: kept, error: ok ? null : `the root answered ${answer.status}${errorCodeOf(parsed)}` };
    } catch (e) {
      return { ...base, ok: false, status: null, ids: {}, answer: null, error: isKitError(e) ? `${e.message} (${e.code})` : String(e) };
    }
  }
}

const CHANGESETS_KEY = '#changesets';
const DEPLOY_KEY = '#deploy';

function errorCodeOf(answer: unknown): string {
  const error = (answer as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (error && typeof error === 'object') {
    const code = typeof error.code === 'string' ? error.code : null;
    const message = typeof error.message === 'string' ? error.message.slice(0, 200) : null;
    return [code && ` (${code})`, message && `: ${message}`].filter(Boolean).join('');
  }
  const message = (answer as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? `: ${message.slice(0, 200)}` : '';
}

export function deployedState(c: Pick<StoredChangeset, 'changes'>): DeployedState {
  const done = c.changes.filter((x) => x.state === 'deployed').length;
  return done === 0 ? 'none' : done === c.changes.length ? 'all' : 'partial';
}

/** An entry's path is below the world (`/stripe/v1/products`); a change names the vendor's (`/v1/products`). */
function vendorPath(twin: string, path: string): string {
  const prefix = `/${twin}`;
  return path.startsWith(`${prefix}/`) ? path.slice(prefix.length) : path === prefix ? '/' : path;
}
