/**
 * A world family's Durable Object: a world made bare and every branch made of it (or of its
 * branches), in this object's SQLite storage. They share one object because a branch reads its
 * parent's keys for every position at or below its cut, synchronously, as on LMDB: a branch stays
 * O(1), and a request never waits on another object.
 *
 * Inside, the multi-world host's own parts run unchanged over `SqliteStorage`: the registry of
 * tokens and settings, the pool that opens a world on its first request and closes it when idle,
 * the wake schedule of closed worlds' timed moves, and the host core that authenticates and
 * serves each request. What Node does with timers alone, an alarm backs here: when the object is
 * evicted, the alarm brings it back at the next due move, webhook attempt or branch expiry.
 */
import { createSealer, sealingKeyBytes, type Sealer } from '../../runtime/roots/sealing.js';
import { createEdgeOutbound } from './outbound.js';
import { DurableObject, type DurableObjectState } from 'cloudflare:workers';
import { guestRuntime, pageFiles, quickjsGlue, quickjsWasm, trustedLoaders, twinBundles } from 'kit-edge:assets';
import { KitError } from '../../runtime/errors.js';
import type { ImportSummary } from '../../runtime/runner/transfer.js';
import { hasPendingDeliveries, nextDeliveryMs } from '../../runtime/runner/state.js';
import { KIT_VERSION } from '../../runtime/version.js';
import { WorldStore } from '../../runtime/world/world.js';
import { createHostCore, type HostCore } from '../core/core.js';
import { pageFilesOf } from '../core/pages.js';
import { createPassVerifier, trustedIssuers } from '../core/access/passes.js';
import type { PassVerifier } from '../core/access/passes.js';
import { requestWorld } from './origins.js';
import { DEFAULT_BUDGET_SIZE, DEFAULT_BUDGET_WINDOW_MS, type BudgetOptions } from '../limits.js';
import { WorldPool, type PoolOptions } from '../multi-world/pool.js';
import { HostRegistry } from '../multi-world/registry.js';
import { TwinSets } from '../multi-world/twin-sets.js';
import { WakeSchedule } from '../multi-world/wake.js';
import { budgetOf, HostWorlds, type NewWorld, type WorldRow } from '../multi-world/worlds.js';
import { edgeGuestEngines, type EdgeGuestAssets } from './engines.js';
import { EDGE_MAX_BODY_BYTES, INDEX_NAME, MISS_HEADER, type EdgeEnv, type FamilyCalls } from './env.js';
import { outcomeOf, unwrap, type Outcome } from './outcome.js';
import { SqliteStorage, sqlOfDurableObject } from './storage/index.js';
import { EdgeStreams } from './streams.js';
import { answerRequest, headOf } from './web.js';

/** How long an alarm waits for the webhook attempts it woke the object for. */
const DELIVERY_WAIT_MS = 20_000;
/**
 * How long after the last request the open worlds' request reports are written: an object is
 * evicted only after seconds without a request, and no hook runs when it is.
 */
const REPORT_SAVE_MS = 500;
/** A GET reschedules the alarm at most this often (a write always does). */
const RESCHEDULE_EVERY_MS = 1000;

const FAMILY_KEY = ['#edge', 'family'];

interface Family {
  storage: SqliteStorage;
  store: WorldStore;
  registry: HostRegistry;
  pool: WorldPool;
  wake: WakeSchedule;
  worlds: HostWorlds;
  twins: TwinSets;
  core: HostCore;
}

export class WorldFamily extends DurableObject<EdgeEnv> implements FamilyCalls {
  #family: Family;
  readonly #streams: EdgeStreams;
  #reportTimer: ReturnType<typeof setTimeout> | null = null;
  #baseUrl: string | null = null;
  #alarmAt: number | null | undefined;
  #scheduledAt = 0;

  constructor(ctx: DurableObjectState, env: EdgeEnv) {
    super(ctx, env);
    this.#family = this.#open();
    this.#streams = new EdgeStreams(ctx, () => this.#family.storage, (name) => {
      const slash = name.indexOf('/');
      const found = this.#family.worlds.streamWorld(name.slice(0, slash), name.slice(slash + 1));
      return found === null ? null : { streamCall: (call) => found.world.streamCall(call), scopeOf: (token) => found.scopeOf(token) };
    });
    // What a previous life left: branches past their ttl go, deliveries still to send go out,
    // closed worlds' timed moves are waited for.
    void ctx.blockConcurrencyWhile(async () => {
      const { worlds, registry, storage, pool, wake } = this.#family;
      // Published here: the alarm that woke the object for these expiries finds nothing left to
      // sweep, and the index would go on listing them.
      if ((await worlds.sweepExpired()).length > 0) await this.#publish();
      for (const name of registry.names()) {
        if (hasPendingDeliveries(storage, name)) void pool.use(name, async () => undefined).catch((e: unknown) => console.error(`kit edge: reopening ${name} for its deliveries failed:`, e));
      }
      wake.start();
    });
  }

  #open(): Family {
    const storage = new SqliteStorage(sqlOfDurableObject(this.ctx.storage));
    const store = new WorldStore(storage);
    const defaultBudget: BudgetOptions = { size: DEFAULT_BUDGET_SIZE, windowMs: DEFAULT_BUDGET_WINDOW_MS };
    // Installed twins are fetched from the index as the family's worlds need them (index-object.ts).
    const twins = new TwinSets(new Map(twinBundles.map((t) => [t.vendor, t])), { fetchInstalled: async (vendor) => this.#index().twinBundle(vendor) });
    const registry = new HostRegistry(storage, { maxCached: 1000, budgetOf: (r) => budgetOf(r, defaultBudget) });
    let wake: WakeSchedule;
    const pool = new WorldPool({
      store,
      storage,
      twins,
      guestRuntime,
      engines: edgeGuestEngines({ wasm: quickjsWasm, glue: quickjsGlue as EdgeGuestAssets['glue'], trustedLoaders: trustedLoaders as EdgeGuestAssets['trustedLoaders'] }),
      roots: this.#roots(),
      onClosed: (name, at) => {
        if (registry.get(name) !== undefined) wake.note(name, at);
      },
    });
    wake = new WakeSchedule(storage, (name) => (registry.get(name) === undefined ? Promise.resolve() : pool.use(name, async (runner) => void (await runner.performDueMoves()))));
    const worlds = new HostWorlds({
      storage,
      store,
      registry,
      pool,
      wake,
      twins,
      defaultBudget,
      baseUrl: () => this.#baseUrl,
      // A branch made over HTTP takes a name no other family holds.
      claim: async (name) => unwrap(await this.#index().claim(name, this.#name())),
    });
    const core = createHostCore({
      worlds,
      hostCode: `${KIT_VERSION}+edge`,
      maxBodyBytes: EDGE_MAX_BODY_BYTES,
      pages: pageFilesOf(pageFiles),
      passes: this.#passes(),
    });
    return { storage, store, registry, pool, wake, worlds, twins, core };
  }

  /** The vendor behind rooted twins: `SEALING_KEY` seals their credentials (none sealed without it), workerd's fetch reaches them. */
  #roots(): PoolOptions['roots'] {
    const loopback = this.env.LOOPBACK_ROOTS === '1';
    const key = this.env.SEALING_KEY;
    let sealer: Sealer | undefined;
    if (key !== undefined && key !== '') {
      try {
        sealer = createSealer(sealingKeyBytes(key));
      } catch {
        console.error('kit edge: SEALING_KEY is not 32 bytes as base64 or hex; no credential can be sealed');
      }
    }
    return { outbound: createEdgeOutbound({ loopback, webhooksAnywhere: loopback }), outboundLoopback: loopback, ...(sealer !== undefined ? { sealer } : {}) };
  }

  /** The pass verifier of `TRUSTED_ISSUERS`, one per object so each issuer's keys stay cached; null: none trusted. */
  #passes(): PassVerifier | null {
    let trusted: string[];
    try {
      trusted = trustedIssuers([], this.env.TRUSTED_ISSUERS);
    } catch (e) {
      // A bad entry trusts nothing rather than something else; the log says why.
      console.error(`kit edge: TRUSTED_ISSUERS is not a list of issuers (${e instanceof Error ? e.message : String(e)}): no pass is taken`);
      return null;
    }
    return trusted.length === 0 ? null : createPassVerifier({ trusted });
  }

  // ------------------------------------------------------------ requests

  async fetch(request: Request): Promise<Response> {
    const { core, registry, twins } = this.#family;
    const head = headOf(request);
    const url = new URL(request.url);
    const { rule, at, where, name } = requestWorld(this.env, url, head);
    const record = name === null ? undefined : registry.get(name);
    if (record === undefined) return new Response(null, { status: 404, headers: { [MISS_HEADER]: '1' } });
    // The world's installed twins in memory before the core judges the head (its code, its twins' scopes).
    await twins.load(record.vendors);
    // A stream: a WebSocket whose first message is the token (the core answers a plain request there).
    if (where.kind === 'world' && where.surface === 'api' && where.sub.startsWith('/streams/') && request.headers.get('upgrade')?.toLowerCase() === 'websocket') {
      let id: string;
      try {
        id = decodeURIComponent(where.sub.slice('/streams/'.length));
      } catch {
        id = '';
      }
      return this.#streams.open(`${where.org}/${where.world}`, id);
    }
    // The base is the address the host is reached at, not a world's own origin.
    const origin = url.origin;
    if (at === null && origin !== this.#baseUrl) {
      this.#baseUrl = origin;
      core.publish({ baseUrl: origin, proxyUrl: null, ca: null, worldOrigins: rule });
    } else if (core.published === null) {
      core.publish({ baseUrl: origin, proxyUrl: null, ca: null, worldOrigins: rule });
    }
    const response = await answerRequest(core.handler, request, EDGE_MAX_BODY_BYTES, head);
    // Only a miss says miss: a twin's or a scenario's answer naming the header would make the
    // Worker send the request again.
    response.headers.delete(MISS_HEADER);
    const read = head.method === 'GET' || head.method === 'HEAD';
    // A branch made or removed over HTTP changes the family's rows (a vendor's own /branches, GitHub's, does not).
    if (!read && where.kind === 'world' && where.surface === 'api' && /^\/branches(\/|$)/.test(where.sub) && response.status < 300) await this.#publish();
    if (!read || Date.now() - this.#scheduledAt > RESCHEDULE_EVERY_MS) await this.#schedule();
    this.#saveReportsSoon();
    return response;
  }

  webSocketMessage(ws: WebSocket, message: ArrayBuffer | string): void {
    this.#streams.message(ws, message);
  }

  webSocketClose(ws: WebSocket, code: number, reason: string): void {
    this.#streams.closed(ws);
    // The closing handshake: workerd answers a client's Close frame itself only under the
    // web_socket_auto_reply_to_close flag (a later compatibility date than ours). Unanswered, a
    // client (kit attach's stream listener) waits out its own timeout, 30 s with the ws package.
    try {
      if (code === 1005) ws.close();
      else ws.close(code, reason);
    } catch {
      // Already closed, or a code no endpoint may send (1006): nothing to answer.
    }
  }

  webSocketError(ws: WebSocket): void {
    this.#streams.closed(ws);
  }

  async alarm(): Promise<void> {
    const { worlds, wake, registry, storage, pool } = this.#family;
    this.#alarmAt = null;
    const removed = await worlds.sweepExpired();
    if (removed.length > 0) await this.#publish();
    await wake.runDue();
    // Webhook attempts that fell due while the object was away: the world's outbox resumes when
    // it opens; the alarm stays until those attempts are made.
    const due = registry.names().filter((name) => (nextDeliveryMs(storage, name) ?? Infinity) <= Date.now());
    await Promise.all(
      due.map((name) =>
        pool.use(name, async () => {
          const until = Date.now() + DELIVERY_WAIT_MS;
          while (Date.now() < until && (nextDeliveryMs(storage, name) ?? Infinity) <= Date.now()) await new Promise((r) => setTimeout(r, 50));
        }),
      ),
    );
    await this.#schedule();
  }

  // ------------------------------------------------------------ the Worker's calls

  create(family: string, input: NewWorld): Promise<Outcome<WorldRow>> {
    return this.#changing(async () => {
      const held = this.#family.storage.get<string>(FAMILY_KEY);
      if (held === undefined) this.#family.storage.transact((tx) => tx.put(FAMILY_KEY, family));
      else if (held !== family) throw new KitError('internal', `this object holds the family ${held}, not ${family}`);
      await this.#family.twins.load(input.vendors);
      return this.#family.worlds.create(input);
    });
  }

  row(name: string): Promise<Outcome<WorldRow>> {
    return outcomeOf(() => this.#family.worlds.row(name));
  }

  setOwner(name: string, owner: string): Promise<Outcome<WorldRow>> {
    return this.#changing(() => this.#family.worlds.setOwner(name, owner));
  }

  setBudget(name: string, budget: string | null): Promise<Outcome<WorldRow>> {
    return this.#changing(() => this.#family.worlds.setBudget(name, budget));
  }

  rotate(name: string): Promise<Outcome<{ name: string; token: string; readToken: string }>> {
    return this.#changing(() => this.#family.worlds.rotate(name));
  }

  remove(name: string): Promise<Outcome<void>> {
    return outcomeOf(async () => {
      const { worlds, registry, store, pool, wake } = this.#family;
      await worlds.remove(name);
      await this.#publish();
      if (registry.names().length > 0) return this.#schedule();
      // The family's last world: its whole storage goes, with its alarm, and the object starts
      // over empty (the index no longer names it).
      wake.stop();
      await pool.closeAll();
      await store.idle();
      await this.ctx.storage.deleteAlarm();
      await this.ctx.storage.deleteAll();
      this.#alarmAt = null;
      this.#family = this.#open();
    });
  }

  importTwin(name: string, body: unknown): Promise<Outcome<ImportSummary>> {
    return this.#changing(async () => {
      const record = this.#family.registry.get(name);
      if (record !== undefined) await this.#family.twins.load(record.vendors);
      return this.#family.worlds.importTwin(name, body);
    });
  }

  twinReplaced(vendor: string): Promise<Outcome<void>> {
    return outcomeOf(async () => {
      const { twins, registry, pool } = this.#family;
      // Fetched again at the next use; the worlds serving the old code close (requests in flight finish on it).
      twins.forget(vendor);
      const serving = registry.list().filter((r) => r.vendors.includes(vendor));
      await Promise.all(serving.map((r) => pool.close(`${r.org}/${r.world}`)));
    });
  }

  // ------------------------------------------------------------ helpers

  /** Writes the open worlds' request reports once requests pause (see REPORT_SAVE_MS). */
  #saveReportsSoon(): void {
    if (this.#reportTimer !== null) clearTimeout(this.#reportTimer);
    this.#reportTimer = setTimeout(() => {
      this.#reportTimer = null;
      const { registry, pool } = this.#family;
      for (const name of registry.names()) {
        try {
          pool.peek(name)?.saveRequestReport();
        } catch (e) {
          console.error(`kit edge: saving ${name}'s request report failed:`, e);
        }
      }
    }, REPORT_SAVE_MS);
  }

  /** A change the index must learn: published, then the alarm set again. */
  #changing<T>(work: () => T | Promise<T>): Promise<Outcome<T>> {
    return outcomeOf(async () => {
      const result = await work();
      await this.#publish();
      await this.#schedule();
      return result;
    });
  }

  #name(): string {
    const name = this.#family.storage.get<string>(FAMILY_KEY);
    if (name === undefined) throw new KitError('internal', 'this family object was never given its name');
    return name;
  }

  #index() {
    return this.env.INDEX.get(this.env.INDEX.idFromName(INDEX_NAME));
  }

  async #publish(): Promise<void> {
    const name = this.#family.storage.get<string>(FAMILY_KEY);
    if (name === undefined) return;
    unwrap(await this.#index().publish(name, this.#family.worlds.rows()));
  }

  /**
   * Sets the alarm at the earliest of: a closed world's noted wake-up, an open world's next timed
   * move (noted too, so an eviction does not lose it), a pending webhook attempt, a branch's expiry.
   */
  async #schedule(): Promise<void> {
    this.#scheduledAt = Date.now();
    const { registry, pool, wake, storage } = this.#family;
    let next = Infinity;
    for (const name of registry.names()) {
      const runner = pool.peek(name);
      if (runner !== undefined) wake.note(name, runner.nextMoveDueMs());
      next = Math.min(next, nextDeliveryMs(storage, name) ?? Infinity, registry.get(name)?.expiresAt ?? Infinity);
    }
    next = Math.min(next, wake.next()?.[0] ?? Infinity);
    const at = next === Infinity ? null : next;
    if (this.#alarmAt === undefined) this.#alarmAt = await this.ctx.storage.getAlarm();
    if (at === this.#alarmAt) return;
    if (at === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(at);
    this.#alarmAt = at;
  }
}
