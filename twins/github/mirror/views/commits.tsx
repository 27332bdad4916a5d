/** History: a branch's commits by day, one commit with its diff, a compare, the branches. */
import type { ComponentChildren } from 'preact';
import { repoPath, type GitHub } from '../github.js';
import { BranchIcon, CommitIcon } from '../icons.js';
import { useLoad } from '../../../../pages/ui/index.js';
import { GhLink } from '../nav.js';
import { Avatar, Blank, Box, Pager, Pending, When, short } from '../parts.js';
import { pathOf, type View } from '../routes.js';
import type { Branch, Commit, Compare } from '../types.js';
import { FileDiffs } from './diff.js';
import { useRepo } from './frame.js';

const PER_PAGE = 30;

function dayOf(iso: string): string {
  return iso.slice(0, 10);
}

/** One commit row: message (to the commit), who and when, the short id. */
function CommitRow({ owner, repo, c }: { owner: string; repo: string; c: Commit }) {
  const [title, ...rest] = c.commit.message.split('\n');
  const login = c.author?.login ?? null;
  return (
    <li class="commit-row">
      <div class="grow">
        <GhLink class="message" to={{ kind: 'commit', owner, repo, sha: c.sha, page: 1 }}>
          {title}
        </GhLink>
        {rest.some((l) => l.trim() !== '') && (
          <span class="more" title={rest.join('\n').trim()}>
            …
          </span>
        )}
        <div class="muted-text small">
          <Avatar login={login ?? c.commit.author.name} size={16} /> <strong>{login ?? c.commit.author.name}</strong> committed <When at={c.commit.committer.date} />
        </div>
      </div>
      <GhLink class="sha btn" to={{ kind: 'commit', owner, repo, sha: c.sha, page: 1 }}>
        {short(c.sha)}
      </GhLink>
    </li>
  );
}

/** Commits grouped by the day they were committed, as GitHub lists them. */
export function CommitList({ owner, repo, commits }: { owner: string; repo: string; commits: Commit[] }) {
  const days: { day: string; commits: Commit[] }[] = [];
  for (const c of commits) {
    const day = dayOf(c.commit.committer.date);
    const last = days[days.length - 1];
    if (last?.day === day) last.commits.push(c);
    else days.push({ day, commits: [c] });
  }
  return (
    <div class="commit-days">
      {days.map((d) => (
        <section key={d.day} class="commit-day">
          <h3>
            <CommitIcon />
            <span>
              Commits <When at={`${d.day}T00:00:00Z`} />
            </span>
          </h3>
          <Box>
            <ul class="rows">
              {d.commits.map((c) => (
                <CommitRow key={c.sha} owner={owner} repo={repo} c={c} />
              ))}
            </ul>
          </Box>
        </section>
      ))}
    </div>
  );
}

/** `/repos/o/r/commits?sha=&path=&page=`. */
export function CommitsView({ gh, view }: { gh: GitHub; view: Extract<View, { kind: 'commits' }> }) {
  const repo = useRepo();
  const list = useLoad(
    () => gh.get<Commit[]>(`${repoPath(view.owner, view.repo)}/commits`, { sha: view.ref, path: view.path, per_page: PER_PAGE, page: view.page }),
    [gh, view.owner, view.repo, view.ref, view.path, view.page],
  );
  const ref = view.ref ?? repo?.default_branch ?? '';
  return (
    <div class="narrow-view">
      <h2 class="page-title">
        Commits
        <span class="muted-text">
          {' '}
          <BranchIcon /> {ref}
          {view.path !== null && <> · {view.path}</>}
        </span>
      </h2>
      {list.data === null ? (
        <Pending error={list.error} what="the commits" />
      ) : list.data.data.length === 0 ? (
        <Blank title="No commits" />
      ) : (
        <>
          <CommitList owner={view.owner} repo={view.repo} commits={list.data.data} />
          <Pager page={view.page} pages={list.data.pages} href={(page) => pathOf({ ...view, page })} />
        </>
      )}
    </div>
  );
}

function Person({ commit }: { commit: Commit }) {
  const login = commit.author?.login ?? null;
  return (
    <span>
      <Avatar login={login ?? commit.commit.author.name} /> <strong>{login ?? commit.commit.author.name}</strong>
      <span class="muted-text">
        {' '}
        committed <When at={commit.commit.committer.date} />
      </span>
    </span>
  );
}

/** `/repos/o/r/commits/<ref>`, `/repos/o/r/git/commits/<sha>`: the commit, its parents, its changed files (300 a page, with `Link`). */
export function CommitView({ gh, view }: { gh: GitHub; view: Extract<View, { kind: 'commit' }> }) {
  const one = useLoad(
    () => gh.get<Commit>(`${repoPath(view.owner, view.repo)}/commits/${view.sha.split('/').map(encodeURIComponent).join('/')}`, { page: view.page }),
    [gh, view.owner, view.repo, view.sha, view.page],
  );
  if (one.data === null) return <Pending error={one.error} what={`commit ${view.sha}`} />;
  const c = one.data.data;
  const [title, ...body] = c.commit.message.split('\n');
  return (
    <div class="commit-view">
      <Box
        class="commit-head"
        header={
          <div>
            <h2 class="commit-title">{title}</h2>
            {body.join('\n').trim() !== '' && <pre class="commit-body">{body.join('\n').trim()}</pre>}
          </div>
        }
      >
        <div class="commit-meta">
          <Person commit={c} />
          <span class="spacer" />
          <span class="muted-text">
            {c.parents.length === 0 ? '0 parents' : c.parents.length === 1 ? '1 parent ' : `${c.parents.length} parents `}
            {c.parents.map((p) => (
              <GhLink key={p.sha} class="sha" to={{ kind: 'commit', owner: view.owner, repo: view.repo, sha: p.sha, page: 1 }}>
                {short(p.sha)}{' '}
              </GhLink>
            ))}
            commit <code class="sha">{c.sha}</code>
          </span>
        </div>
      </Box>
      <FileDiffs files={c.files ?? []} additions={c.stats?.additions} deletions={c.stats?.deletions} />
      <Pager page={view.page} pages={one.data.pages} href={(page) => pathOf({ ...view, page })} />
    </div>
  );
}

/** `/repos/o/r/compare/<base>...<head>`: what head has that base has not, and the diff. */
export function CompareView({ gh, view }: { gh: GitHub; view: Extract<View, { kind: 'compare' }> }) {
  const cmp = useLoad(() => gh.body<Compare>(`${repoPath(view.owner, view.repo)}/compare/${view.basehead.split('/').map(encodeURIComponent).join('/')}`), [gh, view.owner, view.repo, view.basehead]);
  const [base, head] = view.basehead.includes('...') ? view.basehead.split('...') : view.basehead.split('..');
  return (
    <div class="narrow-view">
      <h2 class="page-title">Comparing changes</h2>
      <div class="compare-bar">
        <span class="btn">base: {base}</span> ← <span class="btn">compare: {head}</span>
      </div>
      {cmp.data === null ? (
        <Pending error={cmp.error} what="the comparison" />
      ) : (
        <>
          <p class="muted-text">
            {cmp.data.ahead_by} {cmp.data.ahead_by === 1 ? 'commit' : 'commits'} ahead, {cmp.data.behind_by} behind ({cmp.data.status}).
          </p>
          <CommitList owner={view.owner} repo={view.repo} commits={cmp.data.commits} />
          <FileDiffs files={cmp.data.files ?? []} />
        </>
      )}
    </div>
  );
}

function BranchRow({ owner, repo, b, isDefault, children }: { owner: string; repo: string; b: Branch; isDefault: boolean; children?: ComponentChildren }) {
  return (
    <li class="branch-row">
      <BranchIcon />
      <GhLink class="branch-name" to={{ kind: 'contents', owner, repo, path: '', ref: b.name }}>
        {b.name}
      </GhLink>
      {isDefault && <span class="pill">default</span>}
      {b.protected && <span class="pill">protected</span>}
      <span class="spacer" />
      <GhLink class="sha" to={{ kind: 'commit', owner, repo, sha: b.commit.sha, page: 1 }}>
        {short(b.commit.sha)}
      </GhLink>
      <GhLink class="muted-link" to={{ kind: 'commits', owner, repo, ref: b.name, path: null, page: 1 }}>
        history
      </GhLink>
      {children}
    </li>
  );
}

/** `/repos/o/r/branches`. */
export function BranchesView({ gh, view }: { gh: GitHub; view: Extract<View, { kind: 'branches' }> }) {
  const repo = useRepo();
  const list = useLoad(() => gh.get<Branch[]>(`${repoPath(view.owner, view.repo)}/branches`, { per_page: PER_PAGE, page: view.page }), [gh, view.owner, view.repo, view.page]);
  return (
    <div class="narrow-view">
      <h2 class="page-title">Branches</h2>
      {list.data === null ? (
        <Pending error={list.error} what="the branches" />
      ) : list.data.data.length === 0 ? (
        <Blank title="No branches yet" />
      ) : (
        <>
          <Box header={<strong>All branches</strong>}>
            <ul class="rows">
              {list.data.data.map((b) => (
                <BranchRow key={b.name} owner={view.owner} repo={view.repo} b={b} isDefault={b.name === repo?.default_branch} />
              ))}
            </ul>
          </Box>
          <Pager page={view.page} pages={list.data.pages} href={(page) => pathOf({ ...view, page })} />
        </>
      )}
    </div>
  );
}
