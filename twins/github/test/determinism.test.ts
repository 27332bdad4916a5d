/**
 * The same requests against two fresh worlds of the same name give the same answers, byte for
 * byte: ids, tokens, git object ids, delivery GUIDs and signatures all come from the world's
 * deterministic sources, never from the wall clock or Math.random of the host.
 */
import { describe, expect, it } from 'vitest';
import { startGithubTwin } from './harness.js';
import { b64 } from './helpers.js';

async function session(): Promise<string[]> {
  const gh = await startGithubTwin();
  try {
    const out: string[] = [];
    // A webhook attempt's outcome is an entry of its own, which takes a position and so moves the
    // next entry's seed: each request waits for it, as it arrives sooner or later (on the edge, later).
    const keep = async (res: { status: number; data: unknown; headers: Record<string, unknown> }): Promise<void> => {
      out.push(`${res.status} ${String(res.headers.etag ?? '')} ${JSON.stringify(res.data)}`);
      await gh.settled();
    };
    const created = await gh.admin.request('POST /admin/users', { login: 'dana', email: 'dana@example.test' });
    await keep(created);
    const auth = await gh.admin.request('POST /admin/users/{username}/authorizations', { username: 'dana', scopes: ['repo'] });
    await keep(auth);
    const dana = gh.as((auth.data as { token: string }).token);
    await keep(await dana.repos.createForAuthenticatedUser({ name: 'det', auto_init: true }));
    await keep(await dana.repos.createWebhook({ owner: 'dana', repo: 'det', config: { url: 'https://example.test/h', content_type: 'json', secret: 's' }, events: ['*'] }));
    await keep(await dana.issues.create({ owner: 'dana', repo: 'det', title: 'same', labels: ['x'] }));
    await keep(await dana.repos.createOrUpdateFileContents({ owner: 'dana', repo: 'det', path: 'a.txt', message: 'a', content: b64('a\n') }));
    await keep(await dana.issues.listForRepo({ owner: 'dana', repo: 'det' }));
    out.push(JSON.stringify(await gh.events()));
    return out;
  } finally {
    await gh.close();
  }
}

describe('GitHub twin: determinism', () => {
  it('answers the same requests the same way in two worlds of the same name', async () => {
    const a = await session();
    const b = await session();
    expect(b).toEqual(a);
    // And the log really holds signed deliveries, so the comparison covers them.
    expect(a[a.length - 1]).toContain('x-hub-signature-256');
  });
});
