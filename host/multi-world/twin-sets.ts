/**
 * The twins of a world, by its set of vendors: their bundles, the code version they make
 * (`worldCode` hashes every bundle's source, so once per set) and what the core needs of each.
 * One cache for the pool, which opens runners with them, and the directory, which mounts worlds.
 *
 * Beside the built-in twins, the twins an admin installed (installed-twins.ts): a host that keeps
 * them in memory passes them at start and as they change (`install`, `forget`); one that fetches
 * them where they are kept (an edge family, from the index) passes `fetchInstalled`, and `load`
 * brings a world's before it is served. A change drops every cached set with that vendor, so the
 * next world opened with it, and the code version answered for it, are the new code's.
 */
import { KitError } from '../../runtime/errors.js';
import { worldCode } from '../../runtime/runner/open-runner.js';
import type { TwinBundle } from '../../runtime/runner/types.js';
import { twinScopesOf, type TwinScopes } from '../core/core.js';

export interface TwinSet {
  bundles: TwinBundle[];
  code: string;
  scopes: TwinScopes[];
}

export interface TwinSetsOptions {
  /** Installed twins known at start. */
  installed?: readonly TwinBundle[];
  /** Fetches an installed twin not in memory (null: none installed under that vendor). */
  fetchInstalled?(vendor: string): Promise<TwinBundle | null>;
}

export class TwinSets {
  readonly #builtins: ReadonlyMap<string, TwinBundle>;
  readonly #installed = new Map<string, TwinBundle>();
  readonly #sets = new Map<string, TwinSet>();
  readonly #fetch: TwinSetsOptions['fetchInstalled'];

  constructor(builtins: ReadonlyMap<string, TwinBundle>, options: TwinSetsOptions = {}) {
    this.#builtins = builtins;
    for (const bundle of options.installed ?? []) this.#installed.set(bundle.vendor, bundle);
    this.#fetch = options.fetchInstalled;
  }

  /** The vendors worlds may be made with (built-in and installed in memory), sorted. */
  vendors(): string[] {
    return [...new Set([...this.#builtins.keys(), ...this.#installed.keys()])].sort();
  }

  /** The built-in twins' vendors, sorted. */
  builtinVendors(): string[] {
    return [...this.#builtins.keys()].sort();
  }

  builtins(): TwinBundle[] {
    return [...this.#builtins.values()];
  }

  bundle(vendor: string): TwinBundle | undefined {
    return this.#builtins.get(vendor) ?? this.#installed.get(vendor);
  }

  /** An installed twin, new or replaced: sets with its vendor are made again on their next use. */
  install(bundle: TwinBundle): void {
    if (this.#builtins.has(bundle.vendor)) throw new TypeError(`${bundle.vendor} is a built-in twin`);
    this.#installed.set(bundle.vendor, bundle);
    this.#drop(bundle.vendor);
  }

  /** An installed twin removed, or to be fetched again (replaced elsewhere). */
  forget(vendor: string): void {
    this.#installed.delete(vendor);
    this.#drop(vendor);
  }

  /** The set of `vendors` (a vendor the host has no twin for is left out, and the set not kept). */
  of(vendors: readonly string[]): TwinSet {
    const key = vendors.join(',');
    let set = this.#sets.get(key);
    if (set === undefined) {
      const bundles = vendors.map((v) => this.bundle(v)).filter((b): b is TwinBundle => b !== undefined);
      set = { bundles, code: worldCode(bundles), scopes: bundles.map(twinScopesOf) };
      if (bundles.length === vendors.length) this.#sets.set(key, set);
    }
    return set;
  }

  /** The set of `vendors`, fetching installed twins not in memory first. */
  async load(vendors: readonly string[]): Promise<TwinSet> {
    if (this.#fetch !== undefined) {
      for (const vendor of vendors) {
        if (this.bundle(vendor) !== undefined) continue;
        const fetched = await this.#fetch(vendor);
        if (fetched === null) throw new KitError('unknown_twin', `no twin ${vendor} is installed on this host`, { vendor });
        // Another load may have fetched it meanwhile: either copy is the installed one.
        this.#installed.set(vendor, fetched);
        this.#drop(vendor);
      }
    }
    return this.of(vendors);
  }

  #drop(vendor: string): void {
    for (const key of [...this.#sets.keys()]) if (key.split(',').includes(vendor)) this.#sets.delete(key);
  }
}
