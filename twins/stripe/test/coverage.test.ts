import { describe, expect, it } from 'vitest';
import { buildTwin } from '../../../sdk/twin/build.js';
import { coverage } from '../coverage.js';

describe('the Stripe coverage table', async () => {
  const { manifest } = await buildTwin('twins/stripe/twin/index.ts');
  const routes = manifest.routes.filter((r) => r.name !== 'unrecognized');
  const key = (method: string, path: string): string => `${method} ${path}`;

  it('lists every registered route as implemented (or twin-only), under its own name, method and path', () => {
    for (const r of routes) {
      const row = coverage.find((c) => c.name === r.name);
      expect(row, `route ${r.name} is missing from coverage.ts`).toBeDefined();
      expect(row?.status, r.name).not.toBe('planned');
      expect(key(row?.method ?? '', row?.path ?? ''), r.name).toBe(key(String(r.match.method), r.match.path));
    }
  });

  it('has a route for every implemented row, and none for a planned row', () => {
    const served = new Set(routes.map((r) => key(String(r.match.method), r.match.path)));
    for (const row of coverage) {
      if (row.status === 'planned') expect(served.has(key(row.method, row.path)), `${row.name} is served but listed as planned`).toBe(false);
      else expect(served.has(key(row.method, row.path)), `${row.name} is listed but not served`).toBe(true);
    }
  });

  it('names each endpoint once', () => {
    const names = coverage.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
  });
});
