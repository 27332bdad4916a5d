/**
 * The edge's index: one Durable Object (`idFromName('#index')`) that knows which family holds
 * each world, and a copy of every family's inventory rows for `GET /-/worlds`. A family is the
 * Durable Object of a world made bare and of all its branches (family.ts); it publishes its rows
 * here after each change, so the admin's list costs one call, not one per family.
 *
 * Names are reserved before a family makes the world, so two admins racing for one name get one
 * world and one 409.
 */
import { DurableObject } from 'cloudflare:workers';
import { KitError } from '../../runtime/errors.js';
import type { WorldRow } from '../multi-world/worlds.js';
import { outcomeOf, type Outcome } from './outcome.js';
import type { EdgeEnv, IndexCalls } from './env.js';

export class WorldIndex extends DurableObject<EdgeEnv> implements IndexCalls {
  constructor(ctx: ConstructorParameters<typeof DurableObject<EdgeEnv>>[0], env: EdgeEnv) {
    super(ctx, env);
    // `row` is the family's published row; null while the name is reserved and not yet made.
    this.ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS worlds (name TEXT PRIMARY KEY, family TEXT NOT NULL, row TEXT)');
  }

  /** Holds `name` for `family`; `world_exists` when another family (or the same, made) has it. */
  reserve(name: string, family: string): Promise<Outcome<void>> {
    return outcomeOf(() => {
      const held = this.#family(name);
      if (held !== null) throw new KitError('world_exists', `the world ${name} exists; pick another name or remove it first`);
      this.ctx.storage.sql.exec('INSERT INTO worlds (name, family, row) VALUES (?, ?, NULL)', name, family);
    });
  }

  /** Lets a reservation go (the family could not make the world). A made world stays. */
  release(name: string, family: string): Promise<Outcome<void>> {
    return outcomeOf(() => {
      this.ctx.storage.sql.exec('DELETE FROM worlds WHERE name = ? AND family = ? AND row IS NULL', name, family);
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
