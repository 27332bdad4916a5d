/**
 * Keeps coverage.ts honest against the routes the twin declares, as the world serves its
 * manifest (`GET {world_url}/kitvendor/twin`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { world } from 'twinkit/twin/testing';
import { coverage } from '../coverage.js';

const key = (method: unknown, path: string): string => `${Array.isArray(method) ? method.join(',') : String(method)} ${path}`;

test('every route is a row of coverage.ts under its own name, method and path', async () => {
  const { matchers } = await world().manifest();
  for (const route of matchers) {
    const row = coverage.find((c) => c.name === route.name);
    assert.ok(row, `route ${route.name} is missing from coverage.ts`);
    assert.notEqual(row.status, 'planned', `${route.name} is served but listed as planned`);
    assert.equal(key(row.method, row.path), key(route.method, route.path), route.name);
  }
});

test('every implemented row is served, and no planned one', async () => {
  const { matchers } = await world().manifest();
  const served = new Set(matchers.map((r) => key(r.method, r.path)));
  for (const row of coverage) {
    assert.equal(served.has(key(row.method, row.path)), row.status !== 'planned', `${row.name} (${row.status})`);
  }
  const names = coverage.map((c) => c.name);
  assert.equal(new Set(names).size, names.length, 'a name is listed twice');
});
