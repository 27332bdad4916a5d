/**
 * The host's record of its worlds, kept in the same storage as the worlds themselves:
 *   ['#host', 'world', '<org>/<world>'] → HostedWorld
 * The world's state is the engine's world of the same name (`<org>/<world>`); a branch the
 * engine makes of `acme/shop` is `acme/shop-<label>-<4 hex>`, another world of org `acme`.
 *
 * Records are read through a bounded cache, so a host with thousands of worlds keeps the ones
 * in use in memory and reads the others from storage (one ordered-key lookup) on their next
 * request. A record, its verifier and its request budget are dropped together.
 */
import type { Scope } from '../../runtime/runner/types.js';
import type { Key, Storage } from '../../runtime/store/index.js';
import { prefixEnd } from '../../runtime/store/keys.js';
import { WorldAccess } from '../core/access/world-access.js';
import { RequestBudget, type BudgetOptions } from '../limits.js';

export interface HostedWorld {
  org: string;
  world: string;
  vendors: string[];
  owner: string | null;
  token: string;
  readToken: string;
  /** `<org>/<world>` of the world this one was branched from; null for a world made bare. */
  base: string | null;
  createdAt: number;
  /** Epoch ms when the branch is removed (its `ttl`); null: never. */
  expiresAt: number | null;
  /** `<n>/<window>` or `off`; null: the host's default. */
  budget: string | null;
}

/** A record with what the core needs per request, made once while it is cached. */
export interface CachedWorld {
  readonly record: HostedWorld;
  /** What a token or a named key opens. */
  scopeOf(token: string): Scope | null;
  /** The world's sessions and named keys, kept in the host's storage beside it. */
  readonly access: WorldAccess;
  readonly budget: RequestBudget | null;
}

const PREFIX: Key = ['#host', 'world'];

export const nameOf = (org: string, world: string): string => `${org}/${world}`;

export class HostRegistry {
  readonly #storage: Storage;
  readonly #cache = new Map<string, CachedWorld>();
  readonly #maxCached: number;
  readonly #budgetOf: (record: HostedWorld) => BudgetOptions | false;

  constructor(storage: Storage, options: { maxCached: number; budgetOf: (record: HostedWorld) => BudgetOptions | false }) {
    this.#storage = storage;
    this.#maxCached = options.maxCached;
    this.#budgetOf = options.budgetOf;
  }

  /** The world's record with its verifier and budget; undefined when there is none. */
  find(name: string): CachedWorld | undefined {
    const cached = this.#cache.get(name);
    if (cached !== undefined) {
      // Most recently used last: the map's order is the eviction order.
      this.#cache.delete(name);
      this.#cache.set(name, cached);
      return cached;
    }
    const record = this.#storage.get<HostedWorld>([...PREFIX, name]);
    if (record === undefined) return undefined;
    return this.#remember(name, record);
  }

  get(name: string): HostedWorld | undefined {
    return this.find(name)?.record;
  }

  /** Every record, by name. */
  list(): HostedWorld[] {
    return [...this.#storage.range<HostedWorld>({ start: PREFIX, end: prefixEnd(PREFIX) })].map((kv) => kv.value);
  }

  names(): string[] {
    return [...this.#storage.range({ start: PREFIX, end: prefixEnd(PREFIX) })].map((kv) => kv.key[2] as string);
  }

  /** Writes a record (in the caller's turn, with whatever else it writes); the cache takes it at once. */
  put(record: HostedWorld): void {
    const name = nameOf(record.org, record.world);
    this.#storage.transact((tx) => tx.put([...PREFIX, name], record));
    this.#cache.delete(name);
    this.#remember(name, record);
  }

  /** Removes the record, and the world's sessions, keys and spent passes with it. */
  remove(name: string): void {
    this.#storage.transact((tx) => tx.remove([...PREFIX, name]));
    WorldAccess.removeAll(this.#storage, name);
    this.#cache.delete(name);
  }

  /** Records in memory now (tests, the bench). */
  get cachedCount(): number {
    return this.#cache.size;
  }

  #remember(name: string, record: HostedWorld): CachedWorld {
    // New tokens (a rotation) end the world's sessions and keys as its access is made (world-access.ts).
    const access = new WorldAccess(name, { token: record.token, readToken: record.readToken }, this.#storage);
    const budget = this.#budgetOf(record);
    const entry: CachedWorld = { record, scopeOf: (t) => access.scopeOf(t), access, budget: budget === false ? null : new RequestBudget(budget) };
    this.#cache.set(name, entry);
    if (this.#cache.size > this.#maxCached) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    return entry;
  }
}
