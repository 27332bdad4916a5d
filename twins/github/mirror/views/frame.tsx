/**
 * A repository's frame around every view inside it: its name with the owner, Public or Private,
 * its description, and the tabs (Code, Issues, Pull requests) with their open counts. Loaded
 * once per repository (the frame stays while the views inside it change).
 */
import type { ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { ErrorNote } from '../../../../pages/ui/ui.js';
import { repoPath, type GitHub } from '../github.js';
import { CodeIcon, IssueOpenIcon, PullOpenIcon, RepoIcon } from '../icons.js';
import { useLoad } from '../../../../pages/ui/index.js';
import { GhLink } from '../nav.js';
import { Counter } from '../parts.js';
import type { View } from '../routes.js';
import type { Repo } from '../types.js';

/** The repository the views inside the frame are in: its answer once loaded. */
export const RepoContext = createContext<Repo | null>(null);

export function useRepo(): Repo | null {
  return useContext(RepoContext);
}

/** How many there are of a list, from a one-item page: `last` is the count; with no `Link`, the page's length. */
export async function countOf(gh: GitHub, path: string, query: Record<string, string> = {}): Promise<number> {
  const { data, pages } = await gh.get<unknown[]>(path, { ...query, per_page: 1 });
  return pages.last ?? (pages.next !== null ? pages.next : data.length);
}

type Tab = 'code' | 'issues' | 'pulls';

function tabOf(view: View): Tab {
  if (view.kind === 'issues' || view.kind === 'issue' || view.kind === 'labels') return 'issues';
  if (view.kind === 'pulls' || view.kind === 'pull' || view.kind === 'compare') return 'pulls';
  return 'code';
}

export function RepoFrame({ gh, owner, repo, view, children }: { gh: GitHub; owner: string; repo: string; view: View; children: ComponentChildren }) {
  const loaded = useLoad(() => gh.body<Repo>(repoPath(owner, repo)), [gh, owner, repo]);
  const openPulls = useLoad(() => countOf(gh, `${repoPath(owner, repo)}/pulls`, { state: 'open' }), [gh, owner, repo]);
  const r = loaded.data;
  const tab = tabOf(view);
  // As the API counts (and lists) them: open issues and pull requests together, so the tab agrees with the list under it.
  const openIssues = r === null ? null : r.open_issues_count;
  const item = (t: Tab, to: View, icon: ComponentChildren, name: string, count: number | null) => (
    <li>
      <GhLink class={t === tab ? 'selected' : undefined} to={to}>
        {icon}
        <span>{name}</span>
        <Counter n={count} />
      </GhLink>
    </li>
  );
  return (
    <RepoContext.Provider value={r}>
      <div class="repo-head">
        <div class="container">
          <h1 class="repo-title">
            <RepoIcon />
            <GhLink to={{ kind: 'owner', owner: r?.owner.login ?? owner, org: r?.owner.type === 'Organization', page: 1 }}>{r?.owner.login ?? owner}</GhLink>
            <span class="slash">/</span>
            <strong>
              <GhLink to={{ kind: 'repo', owner, repo }}>{r?.name ?? repo}</GhLink>
            </strong>
            {r !== null && <span class="pill">{r.private ? 'Private' : 'Public'}</span>}
            {r?.archived === true && <span class="pill warn">Public archive</span>}
          </h1>
          <nav class="gh-tabs" aria-label="Repository">
            <ul>
              {item('code', { kind: 'repo', owner, repo }, <CodeIcon />, 'Code', null)}
              {item('issues', { kind: 'issues', owner, repo, state: 'open', labels: null, page: 1 }, <IssueOpenIcon />, 'Issues', openIssues)}
              {item('pulls', { kind: 'pulls', owner, repo, state: 'open', page: 1 }, <PullOpenIcon />, 'Pull requests', openPulls.data)}
            </ul>
          </nav>
        </div>
      </div>
      <div class="container">
        {loaded.error !== null ? <ErrorNote error={loaded.error} what={`Could not load ${owner}/${repo}`} /> : children}
      </div>
    </RepoContext.Provider>
  );
}

/** The sidebar's "About" box of a repository's code view. */
export function About({ repo }: { repo: Repo }) {
  return (
    <div class="about">
      <h2>About</h2>
      {repo.description !== null && repo.description !== '' ? <p>{repo.description}</p> : <p class="muted-text">No description, website, or topics provided.</p>}
      {repo.homepage !== null && repo.homepage !== undefined && repo.homepage !== '' && <p class="homepage">{repo.homepage}</p>}
      {repo.topics !== undefined && repo.topics.length > 0 && (
        <p class="topics">
          {repo.topics.map((t) => (
            <span key={t} class="topic">
              {t}
            </span>
          ))}
        </p>
      )}
    </div>
  );
}
