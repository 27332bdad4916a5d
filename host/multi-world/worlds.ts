/**
 * The worlds of a multi-world host: made, listed, rotated, given owners and budgets, branched
 * and removed (the admin surface and the branch endpoints call these), and found for the core
 * on each request. The engine's world `<org>/<world>` holds a world's state; the registry its
 * tokens and settings; the pool its runner while it is open.
 */
import { KitError } from '../../runtime/errors.js';
import { copyRunnerState, removeRunnerState } from '../../runtime/runner/state.js';
import { parseTwinFiles, placeTwinFiles, type ImportSummary } from '../../runtime/runner/transfer.js';
import type { Scope, StreamCall, StreamResult, WorldRequest, WorldResponse } from '../../runtime/runner/types.js';
import type { Storage } from '../../runtime/store/index.js';
import type { WorldStore } from '../../runtime/world/index.js';
import type { MountedWorld, WorldDirectory } from '../core/core.js';
import { mintTokens } from '../core/credentials.js';
import { HostError } from '../errors.js';
import { DEFAULT_BUDGET_SIZE, DEFAULT_BUDGET_WINDOW_MS, describeBudget, parseBudget, type BudgetOptions } from '../limits.js';
import { checkName, objectBody, segment } from './input.js';
import type { WorldPool } from './pool.js';
import { HostRegistry, nameOf, type CachedWorld, type HostedWorld } from './registry.js';
import type { TwinSets } from './twin-sets.js';
import type { WakeSchedule } from './wake.js';

/** A row of `GET /-/worlds` (spec: host world list row), with the host's own extras. */
export interface WorldRow {
  org: string;
  world: string;
  name: string;
  base: string | null;
  owner: string | null;
  token: string;
  readToken: string;
  twins: { vendor: string; protocol: string; root: null }[];
  createdAt: string;
  expiresAt: string | null;
  budget: string;
  open: boolean;
}

/** What `POST /-/worlds` asks for, checked by the admin surface. */
export interface NewWorld {
  org: string;
  world: string;
  vendors: string[];
  owner: string | null;
  /** `<org>/<world>` to branch at its current position, instead of a bare world. */
  from?: string;
  /** Credentials the caller already holds, adopted instead of minted (both or neither). */
  tokens?: { token: string; readToken: string };
}

/**
 * The worlds as the admin surface changes them. A host that keeps them in its own memory answers
 * at once; the edge variant's answers come from Durable Objects, hence the promises.
 */
export interface WorldAdmin {
  names(): string[] | Promise<string[]>;
  rows(): WorldRow[] | Promise<WorldRow[]>;
  row(name: string): WorldRow | Promise<WorldRow>;
  vendors(): string[] | Promise<string[]>;
  create(input: NewWorld): Promise<WorldRow>;
  setOwner(name: string, owner: string): WorldRow | Promise<WorldRow>;
  setBudget(name: string, budget: string | null): WorldRow | Promise<WorldRow>;
  rotate(name: string): { name: string; token: string; readToken: string } | Promise<{ name: string; token: string; readToken: string }>;
  remove(name: string): Promise<void>;
  /** Places a twin's export files (`{ twin, files }`, docs/export.md) into the world, whose log of that twin is empty. */
  importTwin(name: string, body: unknown): Promise<ImportSummary>;
}

export interface HostWorldsOptions {
  storage: Storage;
  store: WorldStore;
  registry: HostRegistry;
  pool: WorldPool;
  wake: WakeSchedule;
  /** The host's built-in twins. */
  twins: TwinSets;
  /** The host's default budget for a world (`--budget`); false: none. */
  defaultBudget: BudgetOptions | false;
  /** The base URL once the host listens (for the `url` and `api` of a new branch). */
  baseUrl(): string | null;
  now?: () => number;
  /**
   * Called with a branch made over HTTP before it is answered, where another directory must learn
   * its name (the edge's index); a throw removes the branch again and is the answer.
   */
  claim?(name: string): Promise<void>;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** The budget a record asks for, as the registry builds it. */
export function budgetOf(record: HostedWorld, hostDefault: BudgetOptions | false): BudgetOptions | false {
  if (record.budget === null) return hostDefault;
  return parseBudget(record.budget);
}

export class HostWorlds implements WorldAdmin, WorldDirectory {
  readonly notFoundHint = 'this host serves /<org>/<world>/<vendor>/… and /-/<org>/<world>/… of the worlds in GET /-/worlds';
  readonly #o: HostWorldsOptions;
  readonly #mounted = new WeakMap<CachedWorld, MountedWorld>();
  readonly #now: () => number;

  constructor(options: HostWorldsOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
  }

  // ------------------------------------------------------------ the core's directory

  find(org: string, world: string): MountedWorld | null {
    const name = nameOf(org, world);
    const cached = this.#o.registry.find(name);
    if (cached === undefined) return null;
    let mounted = this.#mounted.get(cached);
    if (mounted === undefined) {
      const sets = this.#o.twins;
      const vendors = cached.record.vendors;
      const pool = this.#o.pool;
      mounted = {
        // Read per request: an installed twin replaced changes the code from the next answer on.
        get code() {
          return sets.of(vendors).code;
        },
        get twins() {
          return sets.of(vendors).scopes;
        },
        budget: cached.budget,
        scopeOf: cached.scopeOf,
        access: cached.access,
        handle: (request) => pool.use(name, (runner) => runner.handle(request)),
        hostEndpoint: (request) => (request.path === '/branches' || request.path.startsWith('/branches/') ? this.#branches(name, request) : undefined),
      };
      this.#mounted.set(cached, mounted);
    }
    return mounted;
  }

  /** The world a stream's path names (`/-/<org>/<world>/streams/<id>`), for host/node/streams/. */
  streamWorld(org: string, world: string): { world: { streamCall(call: StreamCall): Promise<StreamResult> }; scopeOf(token: string): Scope | null } | null {
    const name = nameOf(org, world);
    const cached = this.#o.registry.find(name);
    if (cached === undefined) return null;
    const pool = this.#o.pool;
    return { world: { streamCall: (call) => pool.use(name, (runner) => runner.streamCall(call)) }, scopeOf: cached.scopeOf };
  }

  // ------------------------------------------------------------ the admin's

  names(): string[] {
    return this.#o.registry.names();
  }

  rows(): WorldRow[] {
    return this.#o.registry.list().map((r) => this.#row(r));
  }

  row(name: string): WorldRow {
    return this.#row(this.#record(name));
  }

  vendors(): string[] {
    return this.#o.twins.vendors();
  }

  async create(input: NewWorld): Promise<WorldRow> {
    const name = nameOf(input.org, input.world);
    const { store, registry, storage } = this.#o;
    if (registry.get(name) !== undefined || store.hasWorld(name)) throw new KitError('world_exists', `the world ${name} exists; pick another name or remove it first`);
    const tokens = input.tokens ?? mintTokens();
    if (input.from === undefined) {
      const record: HostedWorld = { org: input.org, world: input.world, vendors: input.vendors, owner: input.owner, ...tokens, base: null, createdAt: this.#now(), expiresAt: null, budget: null };
      // One turn: the engine's world and the host's record are committed together.
      this.#engine([name], () => store.createWorld(name, { twins: input.vendors }));
      registry.put(record);
      await storage.durable();
      return this.#row(record);
    }
    const parent = registry.get(input.from);
    if (parent === undefined) throw new KitError('unknown_world', `from names no world on this host: ${input.from}`, { param: 'from' });
    if (input.owner !== null && parent.owner !== null && input.owner !== parent.owner) {
      throw new HostError('other_owner', `the world ${input.from} is owned by ${parent.owner}, not ${input.owner}`, { param: 'from', owner: parent.owner });
    }
    if ([...input.vendors].sort().join(',') !== [...parent.vendors].sort().join(',')) {
      throw new KitError('bad_request', `a branch of ${input.from} has its twins: vendors must be ${parent.vendors.join(', ')}`, { param: 'vendors' });
    }
    // A branch as of the parent's current position, named by the caller.
    const { record: made } = this.#engine([input.from], () => store.openWorld(input.from!).branch({ name }));
    this.#engine([name], () => undefined);
    const record: HostedWorld = { org: input.org, world: input.world, vendors: parent.vendors, owner: input.owner ?? parent.owner, ...tokens, base: input.from, createdAt: Date.parse(made.createdAt), expiresAt: null, budget: parent.budget };
    registry.put(record);
    copyRunnerState(storage, input.from, name);
    await storage.durable();
    return this.#row(record);
  }

  setOwner(name: string, owner: string): WorldRow {
    const record = this.#record(name);
    if (record.owner !== null && record.owner !== owner) {
      throw new HostError('owner_recorded', `the world ${name} is owned by ${record.owner}; an owner is recorded once`, { owner: record.owner });
    }
    const next = { ...record, owner };
    this.#o.registry.put(next);
    return this.#row(next);
  }

  setBudget(name: string, budget: string | null): WorldRow {
    const record = this.#record(name);
    const next = { ...record, budget };
    this.#o.registry.put(next);
    return this.#row(next);
  }

  rotate(name: string): { name: string; token: string; readToken: string } {
    const record = this.#record(name);
    const tokens = mintTokens();
    // The registry's cache takes the new record at once: a request already past its credential
    // check finishes, the next one with an old token is 401.
    this.#o.registry.put({ ...record, ...tokens });
    return { name, ...tokens };
  }

  async remove(name: string): Promise<void> {
    this.#record(name);
    const { store, registry, pool, storage, wake } = this.#o;
    const world = store.openWorld(name);
    if (world.branches().length > 0) {
      throw new KitError('world_has_branches', `the world ${name} has branches (${world.branches().map((b) => b.name).join(', ')}); remove them first`);
    }
    // Out of the directory first, so no new request reaches it; then closed; then removed.
    registry.remove(name);
    await pool.close(name);
    // The engine takes it out of its parent's branches too; its keys are purged in the background.
    const purged = store.removeWorld(name);
    purged.catch((e: unknown) => console.error(`kit host: purging ${name} failed:`, e));
    removeRunnerState(storage, name);
    wake.forget(name);
    await storage.durable();
  }

  async importTwin(name: string, body: unknown): Promise<ImportSummary> {
    const record = this.#record(name);
    // Checked whole before anything is closed or written: a refused import changes nothing.
    const parsed = parseTwinFiles(body);
    if (!record.vendors.includes(parsed.twin)) {
      throw new KitError('unknown_twin', `the world ${name} has no twin ${parsed.twin}; its twins are ${record.vendors.join(', ')}`, { param: 'twin' });
    }
    const { store, pool, storage } = this.#o;
    // An open runner keeps the scenarios in force in memory: the world is closed, and its files
    // placed while no runner holds it (placing is synchronous: none opens meanwhile). A request
    // that came in meanwhile opens it again afterwards, on the placed state.
    for (let tries = 0; pool.holds(name); tries++) {
      if (tries === 5) throw new HostError('world_unavailable', `the world ${name} kept being opened by requests while the import waited to place ${parsed.twin}'s files; try again`);
      await pool.close(name);
    }
    const takesScenario = this.#o.twins.bundle(parsed.twin)?.manifest.scenarios !== false;
    const summary = this.#engine([name], () => placeTwinFiles(storage, store.openWorld(name), parsed, { takesScenario }));
    await storage.durable();
    // On the wall clock the imported twin may have timed moves to wake for: opened once, the
    // world notes its next one when it closes idle (wake.ts), as any world does.
    if (!summary.clock.frozen) await pool.use(name, async () => undefined).catch((e: unknown) => console.error(`kit host: opening ${name} after an import failed:`, e));
    return summary;
  }

  /** Removes the branches whose ttl has passed, with their own branches. Answers the names removed. */
  async sweepExpired(): Promise<string[]> {
    const { store, registry, pool, storage, wake } = this.#o;
    const removed = store.sweepExpiredBranches();
    for (const name of removed) {
      registry.remove(name);
      wake.forget(name);
    }
    // Closed before their runners' keys go: a closing runner writes its request report.
    await Promise.all(removed.map((name) => pool.close(name)));
    for (const name of removed) removeRunnerState(storage, name);
    if (removed.length > 0) await storage.durable();
    return removed;
  }

  // ------------------------------------------------------------ branches over HTTP

  async #branches(name: string, request: WorldRequest): Promise<WorldResponse> {
    const segments = request.path.split('/').filter((s) => s !== '');
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    if (segments.length === 1) {
      if (method === 'GET') return answer(200, this.#engine([name], () => this.#o.store.openWorld(name).branches()));
      if (method === 'POST') return answer(201, await this.#branch(name, request.body));
      throw new KitError('method_not_allowed', `/branches answers GET, POST, not ${request.method}`, { allow: 'GET, POST' });
    }
    if (segments.length === 3) {
      if (method !== 'DELETE') throw new KitError('method_not_allowed', `/branches/<org>/<world> answers DELETE, not ${request.method}`, { allow: 'DELETE' });
      const branch = `${segment(segments[1], 'org')}/${segment(segments[2], 'world')}`;
      if (!this.#engine([name], () => this.#o.store.openWorld(name).branches()).some((b) => b.name === branch)) throw new KitError('unknown_branch', `${name} has no branch ${branch}`);
      await this.remove(branch);
      return { status: 204, headers: {}, body: '' };
    }
    throw new KitError('not_found', `no world endpoint ${request.method} ${request.path}`);
  }

  async #branch(name: string, body: Uint8Array | undefined): Promise<Record<string, unknown>> {
    const input = objectBody(body, ['at', 'ttl', 'live', 'label']);
    const parent = this.#record(name);
    const { store, registry, storage } = this.#o;
    const label = input['label'];
    if (label !== undefined && (typeof label !== 'string' || `${parent.world}-${label}-0000`.length > 63)) {
      throw new KitError('invalid_label', `label is 1 to 40 lower-case letters, digits and dashes, and ${parent.world}-<label>-<4 hex> at most 63 characters`, { param: 'label' });
    }
    if (label === undefined && `${parent.world}-0000`.length > 63) {
      throw new HostError('invalid_name', `${parent.world}-<4 hex> would be over 63 characters: this world cannot be branched`, { param: 'world' });
    }
    if (input['at'] !== undefined && typeof input['at'] !== 'string') throw new KitError('invalid_instant', 'at is an ISO 8601 instant', { param: 'at' });
    const options: Parameters<ReturnType<WorldStore['openWorld']>['branch']>[0] = {};
    if (input['at'] !== undefined) options.at = input['at'] as string;
    if (input['ttl'] !== undefined) options.ttlSeconds = input['ttl'] as number;
    if (input['live'] !== undefined) options.live = input['live'] as boolean;
    if (label !== undefined) options.label = label as string;
    const { record: made } = this.#engine([name], () => store.openWorld(name).branch(options));
    this.#engine([made.name], () => undefined);
    const org = parent.org;
    const world = made.name.slice(org.length + 1);
    checkName(world, 'world');
    const tokens = mintTokens();
    const expiresAt = made.expiresAt === null ? null : Date.parse(made.expiresAt);
    registry.put({ org, world, vendors: parent.vendors, owner: parent.owner, ...tokens, base: name, createdAt: Date.parse(made.createdAt), expiresAt, budget: parent.budget });
    copyRunnerState(storage, name, made.name);
    await storage.durable();
    if (this.#o.claim !== undefined) {
      try {
        await this.#o.claim(made.name);
      } catch (e) {
        await this.remove(made.name);
        throw e;
      }
    }
    const base = this.#o.baseUrl();
    return {
      name: made.name,
      ...tokens,
      expiresAt: made.expiresAt,
      url: base === null ? null : `${base}/${org}/${world}`,
      api: base === null ? null : `${base}/-/${org}/${world}`,
    };
  }

  // ------------------------------------------------------------ helpers

  /**
   * Runs `work` on the engine's worlds `names`, then lets the engine forget those no runner
   * holds: reading a closed world's branches, or branching it, leaves nothing of it in memory.
   */
  #engine<T>(names: string[], work: () => T): T {
    try {
      return work();
    } finally {
      for (const name of names) if (!this.#o.pool.holds(name)) this.#o.store.release(name);
    }
  }

  #record(name: string): HostedWorld {
    const record = this.#o.registry.get(name);
    if (record === undefined) throw new KitError('unknown_world', `no world ${name} on this host`);
    return record;
  }

  #row(r: HostedWorld): WorldRow {
    const name = nameOf(r.org, r.world);
    const budget = budgetOf(r, this.#o.defaultBudget);
    return {
      org: r.org,
      world: r.world,
      name,
      base: r.base,
      owner: r.owner,
      token: r.token,
      readToken: r.readToken,
      twins: r.vendors.map((v) => ({ vendor: v, protocol: this.#o.twins.bundle(v)?.manifest.protocol ?? 'http', root: null })),
      createdAt: iso(r.createdAt)!,
      expiresAt: iso(r.expiresAt),
      budget: budget === false ? 'off' : describeBudget({ size: budget.size ?? DEFAULT_BUDGET_SIZE, windowMs: budget.windowMs ?? DEFAULT_BUDGET_WINDOW_MS }),
      open: this.#o.pool.isOpen(name),
    };
  }
}

function answer(status: number, body: unknown): WorldResponse {
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}
