/**
 * wrangler.toml (what is deployed) and dev.ts's EDGE_CONFIG (what `kit edge dev` and the tests
 * run) say the same: a binding or flag added to one and not the other would make the local
 * variant lie about the deployed one.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EDGE_CONFIG } from './dev.js';

const toml = readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'wrangler.toml'), 'utf8');
const value = (key: string): string | undefined => new RegExp(`^${key}\\s*=\\s*(.+)$`, 'm').exec(toml)?.[1]?.trim();

describe('wrangler.toml', () => {
  it('has the compatibility date and flags the local variant runs with', () => {
    expect(JSON.parse(value('compatibility_date')!)).toBe(EDGE_CONFIG.compatibilityDate);
    expect(JSON.parse(value('compatibility_flags')!)).toEqual([...EDGE_CONFIG.compatibilityFlags]);
  });

  it('binds the same Durable Objects, each on SQLite storage', () => {
    const bindings = [...toml.matchAll(/\[\[durable_objects\.bindings\]\]\s*name\s*=\s*"([^"]+)"\s*class_name\s*=\s*"([^"]+)"/g)].map((m) => [m[1], m[2]]);
    expect(Object.fromEntries(bindings)).toEqual(Object.fromEntries(Object.entries(EDGE_CONFIG.durableObjects).map(([name, o]) => [name, o.className])));
    const sqlite = JSON.parse(/new_sqlite_classes\s*=\s*(\[[^\]]*\])/.exec(toml)![1]!);
    expect([...sqlite].sort()).toEqual(Object.values(EDGE_CONFIG.durableObjects).filter((o) => o.useSQLite).map((o) => o.className).sort());
  });

  it('deploys the built Worker with QuickJS beside it as a compiled module', () => {
    expect(JSON.parse(value('main')!)).toBe('../../dist/edge/worker.js');
    expect(value('no_bundle')).toBe('true');
    expect(toml).toMatch(/type = "CompiledWasm", globs = \["\*\*\/\*\.wasm"\]/);
  });
});
