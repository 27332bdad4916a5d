/**
 * The edge's worlds as the admin surface sees them (`WorldAdmin`, the multi-world host's own
 * surface in host/multi-world/admin.ts): names and rows from the index, every change made by
 * the family that holds the world. A new bare world starts a family of its own, named by it; a
 * world made `from` another joins that one's family.
 */
import { KitError } from '../../runtime/errors.js';
import type { ImportSummary } from '../../runtime/runner/transfer.js';
import type { UntrustedLane } from '../../runtime/lane/types.js';
import type { TwinBundle } from '../../runtime/runner/types.js';
import {
  answerOf,
  builtinNotRemoved,
  builtinRow,
  installedRow,
  notInstalled,
  TwinCheckLane,
  type InstallAnswer,
  type TwinAdmin,
  type TwinDetail,
  type TwinRow,
  type TwinUpload,
} from '../multi-world/installed-twins.js';
import type { NewWorld, WorldAdmin, WorldRow } from '../multi-world/worlds.js';
import { INDEX_NAME, type EdgeEnv } from './env.js';
import { unwrap } from './outcome.js';

export class EdgeWorlds implements WorldAdmin {
  readonly #env: EdgeEnv;
  readonly #vendors: string[];

  constructor(env: EdgeEnv, vendors: readonly string[]) {
    this.#env = env;
    this.#vendors = [...vendors].sort();
  }

  names(): Promise<string[]> {
    return this.#index().names();
  }

  rows(): Promise<WorldRow[]> {
    return this.#index().rows();
  }

  async row(name: string): Promise<WorldRow> {
    return unwrap(await (await this.#familyOf(name)).row(name));
  }

  /** The built-in twins and those installed (kept by the index). */
  async vendors(): Promise<string[]> {
    const installed = (await this.#index().twinRecords()).map((r) => r.vendor);
    return [...new Set([...this.#vendors, ...installed])].sort();
  }

  async create(input: NewWorld): Promise<WorldRow> {
    const name = `${input.org}/${input.world}`;
    let family = name;
    if (input.from !== undefined) {
      const parentFamily = await this.#index().resolve(input.from);
      if (parentFamily === null) throw new KitError('unknown_world', `from names no world on this host: ${input.from}`, { param: 'from' });
      family = parentFamily;
    }
    const index = this.#index();
    unwrap(await index.reserve(name, family, input.vendors));
    try {
      return unwrap(await this.#family(family).create(family, input));
    } catch (e) {
      await index.release(name, family);
      throw e;
    }
  }

  async setOwner(name: string, owner: string): Promise<WorldRow> {
    return unwrap(await (await this.#familyOf(name)).setOwner(name, owner));
  }

  async setBudget(name: string, budget: string | null): Promise<WorldRow> {
    return unwrap(await (await this.#familyOf(name)).setBudget(name, budget));
  }

  async rotate(name: string): Promise<{ name: string; token: string; readToken: string }> {
    return unwrap(await (await this.#familyOf(name)).rotate(name));
  }

  async remove(name: string): Promise<void> {
    unwrap(await (await this.#familyOf(name)).remove(name));
  }

  async importTwin(name: string, body: unknown): Promise<ImportSummary> {
    return unwrap(await (await this.#familyOf(name)).importTwin(name, body));
  }

  /** The family object that holds `name`; `unknown_world` when none does. */
  async #familyOf(name: string) {
    const family = await this.#index().resolve(name);
    if (family === null) throw new KitError('unknown_world', `no world ${name} on this host`);
    return this.#family(family);
  }

  #family(family: string) {
    return this.#env.FAMILIES.get(this.#env.FAMILIES.idFromName(family));
  }

  #index() {
    return this.#env.INDEX.get(this.#env.INDEX.idFromName(INDEX_NAME));
  }
}

/**
 * `/-/twins` on the edge: an upload is checked in the Worker (QuickJS in this thread, with step
 * budgets: `lane`), kept by the index, and fetched by each family whose worlds serve it. A
 * replacement tells those families, which close the worlds that serve it: each opens on the new
 * code at its next request. A family evicted meanwhile fetches the new code when it starts again.
 */
export class EdgeTwins implements TwinAdmin {
  readonly #env: EdgeEnv;
  readonly #builtins: readonly TwinBundle[];
  readonly #checks: TwinCheckLane;

  constructor(env: EdgeEnv, builtins: readonly TwinBundle[], lane: () => UntrustedLane) {
    this.#env = env;
    this.#builtins = builtins;
    this.#checks = new TwinCheckLane(lane);
  }

  async rows(): Promise<TwinRow[]> {
    const installed = (await this.#index().twinRecords()).map(installedRow);
    return [...this.#builtins.map(builtinRow), ...installed].sort((a, b) => (a.vendor < b.vendor ? -1 : 1));
  }

  async detail(vendor: string): Promise<TwinDetail> {
    const index = this.#index();
    const builtin = this.#builtins.find((b) => b.vendor === vendor);
    if (builtin !== undefined) return { ...builtinRow(builtin), manifest: builtin.manifest, worlds: await index.twinWorlds(vendor) };
    const record = (await index.twinRecords()).find((r) => r.vendor === vendor);
    if (record === undefined) throw notInstalled(vendor);
    return { ...installedRow(record), manifest: record.manifest, worlds: await index.twinWorlds(vendor) };
  }

  async install(upload: TwinUpload): Promise<{ answer: InstallAnswer; replaced: boolean }> {
    const { record, bundle } = await this.#checks.prepare(upload, this.#builtins.map((b) => b.vendor));
    const { replaced, families } = unwrap(await this.#index().installTwin(record, bundle.source));
    await Promise.all(
      families.map(async (family) => {
        const told = await this.#env.FAMILIES.get(this.#env.FAMILIES.idFromName(family)).twinReplaced(record.vendor);
        if ('failed' in told) console.error(`kit edge: telling ${family} that ${record.vendor} was replaced failed: ${told.failed.message}`);
      }),
    );
    return { answer: answerOf(record), replaced };
  }

  async remove(vendor: string): Promise<void> {
    if (this.#builtins.some((b) => b.vendor === vendor)) throw builtinNotRemoved(vendor);
    unwrap(await this.#index().removeTwin(vendor));
  }

  #index() {
    return this.#env.INDEX.get(this.#env.INDEX.idFromName(INDEX_NAME));
  }
}

/** Which family serves a world's requests, remembered by this isolate (a name never changes family while it exists). */
export class FamilyCache {
  readonly #known = new Map<string, string>();
  readonly #max: number;

  constructor(max = 10_000) {
    this.#max = max;
  }

  get(name: string): string | undefined {
    return this.#known.get(name);
  }

  set(name: string, family: string): void {
    if (this.#known.size >= this.#max) this.#known.delete(this.#known.keys().next().value as string);
    this.#known.set(name, family);
  }

  forget(name: string): void {
    this.#known.delete(name);
  }
}
