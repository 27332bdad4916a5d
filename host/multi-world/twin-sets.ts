/**
 * The twins of a world, by its set of vendors: their bundles, the code version they make
 * (`worldCode` hashes every bundle's source, so once per set) and what the core needs of each.
 * One cache for the pool, which opens runners with them, and the directory, which mounts worlds.
 */
import { worldCode } from '../../runtime/runner/open-runner.js';
import type { TwinBundle } from '../../runtime/runner/types.js';
import { twinScopesOf, type TwinScopes } from '../core/core.js';

export interface TwinSet {
  bundles: TwinBundle[];
  code: string;
  scopes: TwinScopes[];
}

export class TwinSets {
  readonly #bundles: ReadonlyMap<string, TwinBundle>;
  readonly #sets = new Map<string, TwinSet>();

  constructor(bundles: ReadonlyMap<string, TwinBundle>) {
    this.#bundles = bundles;
  }

  /** The vendors worlds may be made with, sorted. */
  vendors(): string[] {
    return [...this.#bundles.keys()].sort();
  }

  bundle(vendor: string): TwinBundle | undefined {
    return this.#bundles.get(vendor);
  }

  /** The set of `vendors` (a vendor the host has no twin for is left out). */
  of(vendors: readonly string[]): TwinSet {
    const key = vendors.join(',');
    let set = this.#sets.get(key);
    if (set === undefined) {
      const bundles = vendors.map((v) => this.#bundles.get(v)).filter((b): b is TwinBundle => b !== undefined);
      set = { bundles, code: worldCode(bundles), scopes: bundles.map(twinScopesOf) };
      this.#sets.set(key, set);
    }
    return set;
  }
}
