/**
 * Named projections of the GitHub twin's state, served at `GET {world_url}/github/twin/store/<name>`
 * (for the mirror and tools). A store only reads and answers the same for the same state.
 *
 * - `repositories?after=<owner/name>&limit=<1..100>`: every repository of the world, by full
 *   name (lower case), a page at a time. The vendor API has no such list for the site admin
 *   (`/user/repos` is the caller's own, its organizations' and its collaborations; GitHub's
 *   `/repositories` lists public ones only, and the twin does not serve it).
 */
import type { ReadTree, Store } from '../../../sdk/twin/index.js';
import type { StoredRepo } from './resources/repos.js';

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** What the mirror's list shows of a repository (no URLs: the mirror makes its own). */
function summary(repo: StoredRepo): Record<string, unknown> {
  return {
    id: repo.id,
    full_name: `${repo.owner}/${repo.name}`,
    owner: repo.owner,
    name: repo.name,
    private: repo.private,
    archived: repo.archived,
    description: repo.description,
    default_branch: repo.default_branch,
    topics: repo.topics,
    open_issues_count: repo.open_issues_count,
    updated_at: repo.updated_at,
    pushed_at: repo.pushed_at,
  };
}

export const repositoriesStore: Store = (tree: ReadTree, query) => {
  const limit = Math.min(Math.max(Math.trunc(Number(first(query['limit']) ?? 30)) || 30, 1), 100);
  const after = first(query['after'])?.toLowerCase();
  // The name index is ordered by `owner/name` lower case; one more than the page tells whether there is a next.
  const page = tree.list<{ id?: unknown }>('repo_name', after === undefined || after === '' ? { limit } : { after, limit });
  const repositories: Record<string, unknown>[] = [];
  let lastKey: string | null = null;
  for (const item of page.items) {
    lastKey = item.id;
    if (typeof item.value?.id !== 'number') continue;
    const repo = tree.get<StoredRepo>('repo', String(item.value.id));
    if (repo === undefined || typeof repo !== 'object' || typeof repo.name !== 'string' || typeof repo.owner !== 'string') continue;
    repositories.push(summary(repo));
  }
  return { total: tree.count('repo_name'), repositories, next: page.hasMore ? lastKey : null };
};
