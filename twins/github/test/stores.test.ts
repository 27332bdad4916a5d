/**
 * `GET /twin/store/repositories`: every repository of the world by full name, a page at a time,
 * whoever owns it — what the mirror's "All repositories" shows, which no vendor path lists.
 */
import { describe, expect, it } from 'vitest';
import { buildTwin } from '../../../sdk/twin/build.js';
import { createGuestHarness } from '../../../sdk/twin/testing.js';

const ADMIN = { headers: { 'x-kit-auth': 'authorization', authorization: 'token world' } };

describe('the repositories store', () => {
  it('lists every owner\'s repositories by full name, a page at a time, with the total', async () => {
    const { source } = await buildTwin('twins/github/twin/index.ts');
    const h = createGuestHarness(source, { world: 'stores', now: '2026-03-01T00:00:00.000Z' });
    const post = (path: string, body: unknown) => {
      const res = h.request('POST', path, { ...ADMIN, body: JSON.stringify(body) });
      expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
      return res.body as Record<string, unknown>;
    };
    post('/admin/users', { login: 'octocat', email: 'octocat@example.test' });
    post('/admin/organizations', { login: 'acme', admin: 'octocat' });
    post('/user/repos', { name: 'zeta', description: 'the last one' });
    post('/user/repos', { name: 'alpha', private: true });
    post('/orgs/acme/repos', { name: 'Shop' });

    const first = h.store('repositories', { limit: '2' }).body as { total: number; next: string | null; repositories: Record<string, unknown>[] };
    expect(first.total).toBe(3);
    expect(first.repositories.map((r) => r.full_name)).toEqual(['acme/Shop', 'admin/alpha']);
    expect(first.repositories[1]).toMatchObject({ private: true, default_branch: 'main', owner: 'admin', name: 'alpha' });
    expect(first.next).toBe('admin/alpha');

    const second = h.store('repositories', { limit: '2', after: first.next as string }).body as typeof first;
    expect(second.repositories.map((r) => [r.full_name, r.description])).toEqual([['admin/zeta', 'the last one']]);
    expect(second.next).toBeNull();

    // A limit out of range is brought into it rather than refused: the page is at most 100.
    const all = h.store('repositories', { limit: '100000' }).body as typeof first;
    expect(all.repositories).toHaveLength(3);
    expect((h.store('repositories', { limit: 'x' }).body as typeof first).repositories).toHaveLength(3);
  });
});
