/**
 * The edge's index: one Durable Object (`idFromName('#index')`) that knows which family holds
 * each world, and a copy of every family's inventory rows for `GET /-/worlds`. A family is the
 * Durable Object of a world made bare and of all its branches (family.ts); it publishes its rows
 * here after each change, so the admin's list costs one call, not one per family.
 *
 * Names are reserved before a family makes the world, so two admins racing for one name get one
 * world and one 409.
 *
 * The twins an admin installed live here too (`kit_twins`, a `SqliteStorage` that splits a bundle
 * over 1 MiB across rows, under the 2 MB a row may hold): every family fetches the ones its worlds
 * serve, and a removal is refused here, where every family's rows are, while any world serves it.
 */
import { DurableObject } from 'cloudflare:workers';
import { KitError } from '../../runtime/errors.js';
import type { WorldRow } from '../multi-world/worlds.js';
import type { TwinBundle } from '../../runtime/runner/types.js';
import { InstalledTwinStore, inUse, notInstalled, type InstalledTwinRecord } from '../multi-world/installed-twins.js';
import { outcomeOf, type Outcome } from './outcome.js';
import { SqliteStorage, sqlOfDurableObject } from './storage/index.js';
import type { EdgeEnv, IndexCalls } from './env.js';

export class WorldIndex extends DurableObject<EdgeEnv> implements IndexCalls {
  readonly #twins: InstalledTwinStore;

  constructor(ctx: ConstructorParameters<typeof DurableObject<EdgeEnv>>[0], env: EdgeEnv) {
    super(ctx, env);
    // `row` is the family's published row; null while the name is reserved and not yet made.
    this.ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS worlds (name TEXT PRIMARY KEY, family TEXT NOT NULL, row TEXT)');
    // The vendors of a world reserved and not yet made: an installed twin it names is in use already.
    this.ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS reserved_vendors (name TEXT PRIMARY KEY, vendors TEXT NOT NULL)');
    this.#twins = new InstalledTwinStore(new SqliteStorage(sqlOfDurableObject(this.ctx.storage), { table: 'kit_twins' }));
  }

  twinRecords(): InstalledTwinRecord[] {
    return this.#twins.list();
  }

  twinBundle(vendor: string): TwinBundle | null {
    return this.#twins.bundle(vendor) ?? null;
  }

  installTwin(record: InstalledTwinRecord, source: string): Promise<Outcome<{ replaced: boolean; families: string[] }>> {
    return outcomeOf(() => {
      const replaced = this.#twins.put(record, source);
      const families = [...new Set(this.#servedBy(record.vendor).map((w) => w.family))];
      return { replaced, families };
    });
  }

  removeTwin(vendor: string): Promise<Outcome<void>> {
    return outcomeOf(() => {
      if (this.#twins.get(vendor) === undefined) throw notInstalled(vendor);
      const worlds = this.#servedBy(vendor).map((w) => w.name);
      if (worlds.length > 0) throw inUse(vendor, worlds);
      this.#twins.remove(vendor);
    });
  }

  twinWorlds(vendor: string): string[] {
    return this.#servedBy(vendor).map((w) => w.name);
  }

  /** Worlds whose published row lists `vendor`, and worlds being made that will serve it, by name. */
  #servedBy(vendor: string): { name: string; family: string }[] {
    const sql = this.ctx.storage.sql;
    const made = sql
      .exec<{ name: string; family: string; row: string }>('SELECT name, family, row FROM worlds WHERE row IS NOT NULL ORDER BY name')
      .toArray()
      .filter((r) => (JSON.parse(r.row) as WorldRow).twins.some((t) => t.vendor === vendor));
    const reserved = sql
      .exec<{ name: string; family: string; vendors: string }>('SELECT w.name AS name, w.family AS family, r.vendors AS vendors FROM reserved_vendors r JOIN worlds w ON w.name = r.name WHERE w.row IS NULL ORDER BY w.name')
      .toArray()
      .filter((r) => (JSON.parse(r.vendors) as string[]).includes(vendor));
    return [...made, ...reserved].map((r) => ({ name: r.name, family: r.family }));
  }

  /** Holds `name` for `family`; `world_exists` when another family (or the same, made) has it. */
  reserve(name: string, family: string, vendors: readonly string[] = []): Promise<Outcome<void>> {
    return outcomeOf(() => {
      const held = this.#family(name);
      if (held !== null) throw new KitError('world_exists', `the world ${name} exists; pick another name or remove it first`);
      this.ctx.storage.transactionSync(() => {
        this.ctx.storage.sql.exec('INSERT INTO worlds (name, family, row) VALUES (?, ?, NULL)', name, family);
        this.ctx.storage.sql.exec('INSERT OR REPLACE INTO reserved_vendors (name, vendors) VALUES (?, ?)', name, JSON.stringify(vendors));
      });
    });
  }

  /** Lets a reservation go (the family could not make the world). A made world stays. */
  release(name: string, family: string): Promise<Outcome<void>> {
    return outcomeOf(() => {
      this.ctx.storage.sql.exec('DELETE FROM worlds WHERE name = ? AND family = ? AND row IS NULL', name, family);
      this.ctx.storage.sql.exec('DELETE FROM reserved_vendors WHERE name NOT IN (SELECT name FROM worlds WHERE row IS NULL)');
    });
  }

  /** Claims a name a family made by itself (a branch over HTTP); `world_exists` when another family holds it. */
  claim(name: string, family: string): Promise<Outcome<void>> {
    return outcomeOf(() => {
      const held = this.#family(name);
      if (held !== null && held !== family) throw new KitError('world_exists', `the world ${name} exists on this host`);
      if (held === null) this.ctx.storage.sql.exec('INSERT INTO worlds (name, family, row) VALUES (?, ?, NULL)', name, family);
    });
  }

  /** The family that holds `name`, or null. */
  resolve(name: string): string | null {
    return this.#family(name);
  }

  /**
   * The family's worlds as they are now: rows replaced, worlds it no longer has dropped (a
   * reservation still being made stays).
   */
  publish(family: string, rows: WorldRow[]): Promise<Outcome<void>> {
    return outcomeOf(() => {
      const sql = this.ctx.storage.sql;
      this.ctx.storage.transactionSync(() => {
        const now = new Set(rows.map((r) => r.name));
        for (const { name } of sql.exec<{ name: string }>('SELECT name FROM worlds WHERE family = ? AND row IS NOT NULL', family).toArray()) {
          if (!now.has(name)) sql.exec('DELETE FROM worlds WHERE name = ?', name);
        }
        for (const row of rows) {
          sql.exec('INSERT INTO worlds (name, family, row) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET row = excluded.row WHERE family = excluded.family', row.name, family, JSON.stringify(row));
        }
        // Made (or gone): their rows say what they serve from now on.
        sql.exec('DELETE FROM reserved_vendors WHERE name NOT IN (SELECT name FROM worlds WHERE row IS NULL)');
      });
    });
  }

  /** Every made world's row, by name. */
  rows(): WorldRow[] {
    return this.ctx.storage.sql
      .exec<{ row: string }>('SELECT row FROM worlds WHERE row IS NOT NULL ORDER BY name')
      .toArray()
      .map((r) => JSON.parse(r.row) as WorldRow);
  }

  names(): string[] {
    return this.ctx.storage.sql
      .exec<{ name: string }>('SELECT name FROM worlds WHERE row IS NOT NULL ORDER BY name')
      .toArray()
      .map((r) => r.name);
  }

  #family(name: string): string | null {
    const rows = this.ctx.storage.sql.exec<{ family: string }>('SELECT family FROM worlds WHERE name = ?', name).toArray();
    return rows[0]?.family ?? null;
  }
}
