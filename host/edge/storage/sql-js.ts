/**
 * For tests and benchmarks in Node only (never bundled for workerd): sql.js (SQLite compiled
 * to WebAssembly, a devDependency) behind `SqlLike`, standing in for a Durable Object's
 * `ctx.storage.sql` and `transactionSync`. Like a Durable Object, it answers a BLOB as an
 * ArrayBuffer, prepares each query text once, and nests transactions as savepoints.
 */
import { createRequire } from 'node:module';
import type { SqlCursorLike, SqlLike, SqlValue } from './sqlite.js';

/** The part of sql.js this file uses (sql.js ships no types). */
interface SqlJsStatement {
  bind(values: unknown[]): boolean;
  step(): boolean;
  getAsObject(): Record<string, unknown>;
  reset(): void;
  free(): boolean;
}
interface SqlJsDatabaseHandle {
  prepare(sql: string): SqlJsStatement;
  getRowsModified(): number;
  export(): Uint8Array;
  close(): void;
}
interface SqlJsStatic {
  Database: new (data?: Uint8Array) => SqlJsDatabaseHandle;
}

let sqlJs: Promise<SqlJsStatic> | undefined;

/** sql.js, loaded (its WebAssembly compiled) once per process. */
export function loadSqlJs(): Promise<SqlJsStatic> {
  const init = createRequire(import.meta.url)('sql.js') as () => Promise<SqlJsStatic>;
  sqlJs ??= init();
  return sqlJs;
}

const WRITES = /^\s*(INSERT|UPDATE|DELETE|REPLACE)\b/i;

/** One in-memory SQLite database (or one made from `bytes`, as `snapshot()` gives). */
export class SqlJsDatabase implements SqlLike {
  private readonly db: SqlJsDatabaseHandle;
  private readonly statements = new Map<string, SqlJsStatement>();

  constructor(sql: SqlJsStatic, bytes?: Uint8Array) {
    this.db = new sql.Database(bytes);
  }

  exec<T = Record<string, SqlValue>>(query: string, ...bindings: SqlValue[]): SqlCursorLike<T> {
    let statement = this.statements.get(query);
    if (statement === undefined) this.statements.set(query, (statement = this.db.prepare(query)));
    const rows: T[] = [];
    try {
      statement.bind(bindings.map(toSqlJs));
      while (statement.step()) rows.push(fromSqlJs(statement.getAsObject()) as T);
    } finally {
      statement.reset();
    }
    const rowsWritten = WRITES.test(query) ? this.db.getRowsModified() : 0;
    return {
      [Symbol.iterator]: () => rows[Symbol.iterator](),
      toArray: () => rows,
      one: () => {
        if (rows.length !== 1) throw new Error(`Expected exactly one result from SQL query, but got ${rows.length === 0 ? 'no results' : 'more than one'}.`);
        return rows[0] as T;
      },
      rowsWritten,
    };
  }

  transactionSync<T>(fn: () => T): T {
    this.exec('SAVEPOINT kit_tx');
    try {
      const result = fn();
      this.exec('RELEASE kit_tx');
      return result;
    } catch (e) {
      this.exec('ROLLBACK TO kit_tx');
      this.exec('RELEASE kit_tx');
      throw e;
    }
  }

  /** The database's bytes, to open again as a new `SqlJsDatabase` (a restart). */
  snapshot(): Uint8Array {
    // Freed first: older sql.js freed every prepared statement when it exported.
    for (const s of this.statements.values()) s.free();
    this.statements.clear();
    return this.db.export();
  }

  close(): void {
    for (const s of this.statements.values()) s.free();
    this.statements.clear();
    this.db.close();
  }
}

function toSqlJs(value: SqlValue): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'number') return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError(`cannot bind ${typeof value} to SQL`);
}

/** BLOBs as a Durable Object answers them: an ArrayBuffer of their own. */
function fromSqlJs(row: Record<string, unknown>): Record<string, SqlValue> {
  const out: Record<string, SqlValue> = {};
  for (const [name, value] of Object.entries(row)) out[name] = value instanceof Uint8Array ? (value.slice().buffer as ArrayBuffer) : (value as SqlValue);
  return out;
}
