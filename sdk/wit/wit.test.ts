/**
 * No WIT parser is installed here, so this keeps `twin.wit` honest by hand: identifiers are
 * kebab-case, keywords are %-escaped, every `use` resolves, and the records that mirror the
 * JSON protocol have the fields a real bundle answers.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildTwin } from '../twin/build.js';

const text = readFileSync(fileURLToPath(new URL('./twin.wit', import.meta.url)), 'utf8');
/** The WIT without comments. */
const code = text.replace(/\/\/.*$/gm, '');

const KEYWORDS = new Set('as async bool borrow char constructor enum export f32 f64 flags from func future import include interface list map option own package record resource result s16 s32 s64 s8 static stream string tuple type u16 u32 u64 u8 use variant with world'.split(' '));
const ID = /^%?[a-z][a-z0-9]*(-[a-z][a-z0-9]*)*$/;

function blocks(kind: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of code.matchAll(new RegExp(`\\b${kind}\\s+([a-z0-9-]+)\\s*\\{([^}]*)\\}`, 'g'))) {
    const members = m[2]!.split(',').map((f) => f.trim()).filter(Boolean).map((f) => f.split(/[:(]/)[0]!.trim());
    out.set(m[1]!, members);
  }
  return out;
}

const records = blocks('record');
const variants = blocks('variant');
const enums = blocks('enum');
const aliases = new Set([...code.matchAll(/\btype\s+([a-z0-9-]+)\s*=/g)].map((m) => m[1]!));

function camel(kebab: string): string {
  return kebab.replace(/^%/, '').replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

describe('sdk/wit/twin.wit', () => {
  it('has balanced braces and a versioned package', () => {
    expect(code.split('{').length).toBe(code.split('}').length);
    expect(code).toMatch(/^\s*package kit:twin@\d+\.\d+\.\d+;/m);
  });

  it('uses kebab-case identifiers and escapes keywords', () => {
    const names = [...records.values(), ...variants.values(), ...enums.values()].flat();
    names.push(...[...code.matchAll(/^\s*(%?[a-z0-9-]+):\s*func/gm)].map((m) => m[1]!));
    for (const name of names) {
      expect(name, name).toMatch(ID);
      expect(KEYWORDS.has(name), `${name} is a keyword: write %${name}`).toBe(false);
    }
  });

  it('defines every type a `use` brings in', () => {
    const defined = new Set([...records.keys(), ...variants.keys(), ...enums.keys(), ...aliases]);
    for (const m of code.matchAll(/use\s+types\.\{([^}]*)\}/g)) {
      for (const name of m[1]!.split(',').map((s) => s.trim())) expect(defined.has(name), name).toBe(true);
    }
  });

  it('mirrors the JSON protocol: manifest, writes, events, list pages, invoke output', async () => {
    const { manifest } = await buildTwin(fileURLToPath(new URL('../../twins/hello/twin/index.ts', import.meta.url)));
    expect(records.get('twin-manifest')!.map(camel).sort()).toEqual(Object.keys(manifest).sort());
    expect(records.get('twin-models')!.map(camel).sort()).toEqual(['endpointEnv', 'hosts', 'resources']);
    expect(records.get('record-write')!.map(camel)).toEqual(['type', 'id', 'value']);
    expect(records.get('emitted-event')!.map(camel)).toEqual(['type', 'data']);
    expect(records.get('list-page')!.map(camel)).toEqual(['items', 'hasMore']);
    expect(records.get('invoke-output')!.map(camel)).toEqual(['response', 'writes', 'events', 'thrown']);
    expect(variants.get('invocation')).toEqual(['route', 'move', 'store']);
    expect(records.get('call-context')!.map(camel)).toEqual(['world', 'twin', 'position', 'nowMs']);
  });
});
