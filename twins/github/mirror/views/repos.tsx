/**
 * Lists of repositories: the session's own (`/user/repos`, the home view), an owner's
 * (`/users/<u>/repos`, `/orgs/<o>/repos`), and every repository of the world (`/repositories`,
 * from the twin's `repositories` store, by full name).
 */
import type { GitHub } from '../github.js';
import { RepoIcon } from '../icons.js';
import { useLoad } from '../../../../pages/ui/index.js';
import { GhLink } from '../nav.js';
import { Avatar, Blank, Pager, Pending, When } from '../parts.js';
import { pathOf, type View } from '../routes.js';
import type { Repo, RepoSummary } from '../types.js';

const PER_PAGE = 30;

interface Shown {
  owner: string;
  name: string;
  full_name: string;
  private: boolean;
  archived: boolean;
  description: string | null;
  topics: string[];
  updated_at: string;
}

const fromRepo = (r: Repo): Shown => ({ owner: r.owner.login, name: r.name, full_name: r.full_name, private: r.private, archived: r.archived === true, description: r.description, topics: r.topics ?? [], updated_at: r.updated_at });
const fromSummary = (r: RepoSummary): Shown => ({ owner: r.owner, name: r.name, full_name: r.full_name, private: r.private, archived: r.archived, description: r.description, topics: r.topics, updated_at: r.updated_at });

function RepoList({ repos }: { repos: Shown[] }) {
  return (
    <ul class="repo-list">
      {repos.map((r) => (
        <li key={r.full_name} class="repo-item">
          <h3>
            <GhLink to={{ kind: 'repo', owner: r.owner, repo: r.name }}>{r.full_name}</GhLink>
            <span class="pill">{r.private ? 'Private' : 'Public'}</span>
            {r.archived && <span class="pill warn">Archived</span>}
          </h3>
          {r.description !== null && r.description !== '' && <p class="description">{r.description}</p>}
          {r.topics.length > 0 && (
            <p class="topics">
              {r.topics.map((t) => (
                <span key={t} class="topic">
                  {t}
                </span>
              ))}
            </p>
          )}
          <p class="muted-text small">
            Updated <When at={r.updated_at} />
          </p>
        </li>
      ))}
    </ul>
  );
}

function Heading({ title, login }: { title: string; login?: string }) {
  return (
    <div class="list-heading">
      {login !== undefined && <Avatar login={login} size={32} />}
      <h2>{title}</h2>
    </div>
  );
}

/** `/user/repos`: the repositories of the account the session acts as (the site admin, `admin`). */
export function HomeView({ gh, view }: { gh: GitHub; view: Extract<View, { kind: 'home' }> }) {
  const list = useLoad(() => gh.get<Repo[]>('/user/repos', { per_page: PER_PAGE, page: view.page, sort: 'full_name' }), [gh, view.page]);
  const all = useLoad(() => gh.store<{ total: number }>('repositories', { limit: 1 }), [gh]);
  return (
    <div class="container narrow-view">
      <Heading title="Repositories" login="admin" />
      <p class="muted-text">
        The site admin's own repositories, its organizations' and those it collaborates on (<code>GET /user/repos</code>).{' '}
        <GhLink to={{ kind: 'all', after: null }}>Every repository in this world{all.data === null ? '' : ` (${all.data.total.toLocaleString('en-US')})`}</GhLink>.
      </p>
      {list.data === null ? (
        <Pending error={list.error} what="the repositories" />
      ) : list.data.data.length === 0 ? (
        <Blank title="No repositories yet">
          Create one with <code>octokit.rest.repos.createForAuthenticatedUser</code>, and it shows here.
        </Blank>
      ) : (
        <>
          <RepoList repos={list.data.data.map(fromRepo)} />
          <Pager page={view.page} pages={list.data.pages} href={(page) => pathOf({ ...view, page })} />
        </>
      )}
    </div>
  );
}

/** `/repositories?after=`: every repository, from the twin's store, 30 a page. */
export function AllView({ gh, view }: { gh: GitHub; view: Extract<View, { kind: 'all' }> }) {
  const list = useLoad(() => gh.store<{ total: number; repositories: RepoSummary[]; next: string | null }>('repositories', { limit: PER_PAGE, after: view.after }), [gh, view.after]);
  return (
    <div class="container narrow-view">
      <Heading title={`All repositories${list.data === null ? '' : ` (${list.data.total.toLocaleString('en-US')})`}`} />
      <p class="muted-text">Every repository of this world, whoever owns it, by name (the twin's <code>repositories</code> store).</p>
      {list.data === null ? (
        <Pending error={list.error} what="the repositories" />
      ) : list.data.repositories.length === 0 ? (
        <Blank title="No repositories yet" />
      ) : (
        <>
          <RepoList repos={list.data.repositories.map(fromSummary)} />
          {(view.after !== null || list.data.next !== null) && (
            <nav class="gh-pager" aria-label="Pages">
              {view.after !== null ? <GhLink to={{ kind: 'all', after: null }}>« First</GhLink> : <span class="disabled">« First</span>}
              {list.data.next !== null ? <GhLink to={{ kind: 'all', after: list.data.next }}>Next ›</GhLink> : <span class="disabled">Next ›</span>}
            </nav>
          )}
        </>
      )}
    </div>
  );
}

/** `/users/<u>/repos`, `/orgs/<o>/repos`: an account's repositories. */
export function OwnerView({ gh, view }: { gh: GitHub; view: Extract<View, { kind: 'owner' }> }) {
  const path = `/${view.org ? 'orgs' : 'users'}/${encodeURIComponent(view.owner)}/repos`;
  const list = useLoad(() => gh.get<Repo[]>(path, { per_page: PER_PAGE, page: view.page, sort: 'full_name' }), [gh, path, view.page]);
  return (
    <div class="container narrow-view">
      <Heading title={view.owner} login={view.owner} />
      {list.data === null ? (
        <Pending error={list.error} what={`the repositories of ${view.owner}`} />
      ) : list.data.data.length === 0 ? (
        <Blank title={`${view.owner} doesn’t have any repositories yet.`} />
      ) : (
        <>
          <p class="muted-text">
            <RepoIcon /> {list.data.data.length === PER_PAGE || view.page > 1 ? 'Repositories' : `${list.data.data.length} ${list.data.data.length === 1 ? 'repository' : 'repositories'}`}
          </p>
          <RepoList repos={list.data.data.map(fromRepo)} />
          <Pager page={view.page} pages={list.data.pages} href={(page) => pathOf({ ...view, page })} />
        </>
      )}
    </div>
  );
}
