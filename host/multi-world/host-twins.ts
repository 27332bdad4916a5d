/**
 * `/-/twins` of the multi-world host: installed twins kept in the host's storage (LMDB, under
 * `<dir>/.kit-host/worlds/`, beside the registry), in memory for every world that serves them,
 * checked in a sandbox lane of the host's own before anything keeps or serves them.
 *
 * A replacement takes effect at once: every open world that serves the vendor is closed (requests
 * in flight finish on the old code), and its next request opens it on the new code, under a new
 * `x-kit-world-code`. The world's log, stores and scenarios stay as they were.
 */
import type { TwinBundle } from '../../runtime/runner/types.js';
import type { Storage } from '../../runtime/store/index.js';
import {
  answerOf,
  builtinNotRemoved,
  builtinRow,
  InstalledTwinStore,
  installedRow,
  inUse,
  notInstalled,
  TwinCheckLane,
  type InstallAnswer,
  type TwinAdmin,
  type TwinDetail,
  type TwinRow,
  type TwinUpload,
} from './installed-twins.js';
import type { WorldPool } from './pool.js';
import { nameOf, type HostRegistry } from './registry.js';
import type { TwinSets } from './twin-sets.js';

export interface HostTwinsOptions {
  storage: Storage;
  twins: TwinSets;
  registry: HostRegistry;
  pool: WorldPool;
  /** Where installs are checked (closed with the host). */
  checks: TwinCheckLane;
  now?: () => number;
}

export class HostTwins implements TwinAdmin {
  readonly #o: HostTwinsOptions;
  readonly #store: InstalledTwinStore;
  /** One install or removal at a time: each reads what the one before it left. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: HostTwinsOptions) {
    this.#o = options;
    this.#store = new InstalledTwinStore(options.storage);
  }

  /** The installed twins' bundles, for the host's `TwinSets` at start. */
  static bundlesIn(storage: Storage): TwinBundle[] {
    const store = new InstalledTwinStore(storage);
    return store.list().flatMap((r) => store.bundle(r.vendor) ?? []);
  }

  async rows(): Promise<TwinRow[]> {
    const builtins = this.#o.twins.builtins().map(builtinRow);
    return [...builtins, ...this.#store.list().map(installedRow)].sort((a, b) => (a.vendor < b.vendor ? -1 : 1));
  }

  async detail(vendor: string): Promise<TwinDetail> {
    const builtin = this.#o.twins.builtins().find((b) => b.vendor === vendor);
    if (builtin !== undefined) return { ...builtinRow(builtin), manifest: builtin.manifest, worlds: this.#servedBy(vendor) };
    const record = this.#store.get(vendor);
    if (record === undefined) throw notInstalled(vendor);
    return { ...installedRow(record), manifest: record.manifest, worlds: this.#servedBy(vendor) };
  }

  install(upload: TwinUpload): Promise<{ answer: InstallAnswer; replaced: boolean }> {
    return this.#serially(async () => {
      const { twins, pool, storage } = this.#o;
      const { record, bundle } = await this.#o.checks.prepare(upload, twins.builtinVendors(), this.#o.now);
      const replaced = this.#store.put(record, bundle.source);
      await storage.durable();
      twins.install(bundle);
      // Open worlds serving the old code close; each opens on the new code at its next request.
      if (replaced) await Promise.all(this.#servedBy(record.vendor).map((name) => pool.close(name)));
      return { answer: answerOf(record), replaced };
    });
  }

  remove(vendor: string): Promise<void> {
    return this.#serially(async () => {
      if (this.#o.twins.builtinVendors().includes(vendor)) throw builtinNotRemoved(vendor);
      if (this.#store.get(vendor) === undefined) throw notInstalled(vendor);
      const worlds = this.#servedBy(vendor);
      if (worlds.length > 0) throw inUse(vendor, worlds);
      this.#store.remove(vendor);
      this.#o.twins.forget(vendor);
      await this.#o.storage.durable();
    });
  }

  #servedBy(vendor: string): string[] {
    return this.#o.registry
      .list()
      .filter((r) => r.vendors.includes(vendor))
      .map((r) => nameOf(r.org, r.world))
      .sort();
  }

  #serially<T>(work: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(work, work);
    this.#queue = result.catch(() => undefined);
    return result;
  }
}
