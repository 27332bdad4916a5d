/**
 * A record of the twin's that does not hold what the twin writes there (issue 30, item 4: a
 * scenario could write one; records brought in from elsewhere still can) is answered with a
 * 500 in GitHub's shape naming it, never with an id made from it or an object missing its
 * fields. Through @octokit/rest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGithubTwin, type GithubTwin } from './harness.js';
import { failure } from './helpers.js';

describe('GitHub twin: malformed records', () => {
  let gh: GithubTwin;
  let dev: string;
  beforeAll(async () => {
    gh = await startGithubTwin();
    dev = await gh.user('dev');
  });
  afterAll(async () => { await gh?.close(); });

  it('answers a create whose id counter is malformed with a 500 naming it, not an id made from it', async () => {
    const first = await gh.as(dev).repos.createForAuthenticatedUser({ name: 'first' });
    expect(Number.isInteger(first.data.id)).toBe(true);
    for (const bad of [{ next: 'x' }, 'not an object', { next: 0 }]) {
      await gh.writeRecords([{ type: 'counter', id: 'repo', value: bad }]);
      const e = await failure(gh.as(dev).repos.createForAuthenticatedUser({ name: 'second' }));
      expect(e.status).toBe(500);
      expect(e.response?.data).toMatchObject({ message: expect.stringContaining("record of type 'counter' and id 'repo' is malformed"), status: '500' });
    }
    await gh.writeRecords([{ type: 'counter', id: 'repo', value: { next: first.data.id - 1_000 + 1 } }]);
    const second = await gh.as(dev).repos.createForAuthenticatedUser({ name: 'second' });
    expect(second.data.id).toBe(first.data.id + 1);
  });

  it('answers a read of a malformed repository with a 500 naming it', async () => {
    const repo = await gh.as(dev).repos.createForAuthenticatedUser({ name: 'wrecked' });
    await gh.writeRecords([{ type: 'repo', id: String(repo.data.id), value: { garbage: true } }]);
    for (const call of [gh.as(dev).repos.get({ owner: 'dev', repo: 'wrecked' }), gh.as(dev).issues.listForRepo({ owner: 'dev', repo: 'wrecked' })]) {
      const e = await failure(call);
      expect(e.status).toBe(500);
      expect(e.response?.data).toMatchObject({ message: expect.stringContaining(`record of type 'repo' and id '${repo.data.id}' is malformed`) });
    }
    // Other repositories are not affected.
    expect((await gh.as(dev).repos.get({ owner: 'dev', repo: 'first' })).data.name).toBe('first');
  });
});
