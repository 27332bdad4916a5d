import { Octokit } from '@octokit/rest';
import { describe, expect, it } from 'vitest';
import { buildTwin } from '../../../sdk/twin/build.js';
import { coverage } from '../coverage.js';

const SCOPES = ['repos', 'git', 'issues', 'pulls', 'users', 'search', 'rateLimit'] as const;
type Endpoints = Record<string, Record<string, { endpoint: { DEFAULTS: { method: string; url: string } } }>>;
const rest = new Octokit().rest as unknown as Endpoints;
const octokit = (name: string): { method: string; url: string } | undefined => {
  const [scope, method] = name.split('.');
  return rest[scope ?? '']?.[method ?? '']?.endpoint.DEFAULTS;
};
/** A twin pattern (`/repos/:owner/:repo/git/ref/*ref`) in Octokit's form (`…/git/ref/{ref}`). */
const template = (path: string): string => path.replace(/[:*](\w+)/g, '{$1}');

describe('the GitHub coverage table', async () => {
  const { manifest } = await buildTwin('twins/github/twin/index.ts');
  const routes = manifest.routes.filter((r) => r.name !== 'unrecognized');

  it('lists every route under its own name, method and path, as served', () => {
    for (const r of routes) {
      const row = coverage.find((c) => c.name === r.name);
      expect(row, `route ${r.name} is missing from coverage.ts`).toBeDefined();
      expect(row?.status, r.name).not.toBe('planned');
      expect(`${row?.method} ${row?.path}`, r.name).toBe(`${String(r.match.method)} ${template(r.match.path)}`);
    }
  });

  it('has a route for every served row and none for a planned row', () => {
    const names = new Set(routes.map((r) => r.name));
    for (const row of coverage) {
      const served = names.has(row.name) || (row.servedBy !== undefined && names.has(row.servedBy));
      expect(served, `${row.name} is ${row.status}`).toBe(row.status !== 'planned');
    }
  });

  it('agrees with the installed @octokit/rest: every method of the modelled scopes is listed, with Octokit\'s method and path', () => {
    for (const scope of SCOPES) {
      for (const name of Object.keys(rest[scope] ?? {})) {
        expect(coverage.some((c) => c.name === `${scope}.${name}`), `${scope}.${name} is missing from coverage.ts`).toBe(true);
      }
    }
    for (const row of coverage) {
      const d = octokit(row.name);
      if (row.status === 'ghes' || row.status === 'variant' || row.status === 'twin-only' || row.status === 'git-http') {
        expect(d, `${row.name} is an Octokit method; it should not be ${row.status}`).toBeUndefined();
        continue;
      }
      expect(d, `${row.name} is not an @octokit/rest method`).toBeDefined();
      expect(`${row.method} ${row.path}`).toBe(`${d?.method} ${d?.url}`);
    }
  });

  it('names each endpoint once', () => {
    const names = coverage.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
  });
});
