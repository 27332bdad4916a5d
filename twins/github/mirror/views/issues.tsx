/**
 * Issues as GitHub's Issues tab shows them: the list (open or closed, with labels, filtered by
 * a label), one issue with its comments and its sidebar (assignees, labels, milestone), the
 * repository's labels. The API's list of a repository's issues holds its pull requests too;
 * the list shows them as the API answers, each with its pull request icon.
 */
import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { repoPath, type GitHub } from '../github.js';
import { CommentIcon, IssueClosedIcon, IssueOpenIcon, LockIcon } from '../icons.js';
import { useLoad } from '../../../../pages/ui/index.js';
import { GhLink, go, useBase } from '../nav.js';
import { Avatar, Blank, Box, ItemIcon, LabelPill, Login, Markdown, Pager, Pending, StateBadge, When } from '../parts.js';
import { pathOf, type IssueState, type View } from '../routes.js';
import type { Comment, Issue, Label, User } from '../types.js';
import { countOf } from './frame.js';

const PER_PAGE = 25;

/** A comment box of the timeline: avatar beside, the header (who, when, their association), the body. */
export function TimelineComment({ user, at, association, body, verb = 'commented', children }: { user: User | null; at: string; association?: string; body: string | null; verb?: string; children?: ComponentChildren }) {
  return (
    <div class="timeline-item">
      <Avatar login={user?.login ?? null} size={40} />
      <Box
        class="comment"
        header={
          <div class="comment-head">
            <strong>
              <Login user={user} />
            </strong>{' '}
            <span class="muted-text">
              {verb} <When at={at} />
            </span>
            <span class="spacer" />
            {association !== undefined && association !== 'NONE' && <span class="pill">{association.charAt(0) + association.slice(1).toLowerCase()}</span>}
          </div>
        }
      >
        <div class="comment-body">
          <Markdown text={body} empty="No description provided." />
          {children}
        </div>
      </Box>
    </div>
  );
}

/** An issue's (or a pull request's) comments, 100 a page, oldest first. */
export function Comments({ gh, owner, repo, number, total }: { gh: GitHub; owner: string; repo: string; number: number; total: number }) {
  const pages = Math.max(1, Math.ceil(total / 100));
  const list = useLoad(async () => {
    // Every page of a long discussion, one after another (GitHub shows them all, folding the middle).
    const all: Comment[] = [];
    for (let page = 1; page <= Math.min(pages, 10); page++) all.push(...(await gh.body<Comment[]>(`${repoPath(owner, repo)}/issues/${number}/comments`, { per_page: 100, page })));
    return all;
  }, [gh, owner, repo, number, pages]);
  if (total === 0) return null;
  if (list.data === null) return <Pending error={list.error} what="the comments" />;
  return (
    <>
      {list.data.map((c) => (
        <TimelineComment key={c.id} user={c.user} at={c.created_at} association={c.author_association} body={c.body} />
      ))}
      {pages > 10 && <p class="note">The first 1,000 of {total.toLocaleString('en-US')} comments are shown.</p>}
    </>
  );
}

/** The sidebar of an issue or a pull request. */
export function Sidebar({ issue, owner, repo, reviewers }: { issue: Pick<Issue, 'assignees' | 'labels' | 'milestone'>; owner: string; repo: string; reviewers?: User[] }) {
  return (
    <aside class="sidebar discussion-sidebar">
      {reviewers !== undefined && (
        <section>
          <h3>Reviewers</h3>
          {reviewers.length === 0 ? (
            <p class="muted-text">No reviews</p>
          ) : (
            reviewers.map((u) => (
              <p key={u.login}>
                <Avatar login={u.login} /> <Login user={u} />
              </p>
            ))
          )}
        </section>
      )}
      <section>
        <h3>Assignees</h3>
        {issue.assignees.length === 0 ? (
          <p class="muted-text">No one assigned</p>
        ) : (
          issue.assignees.map((u) => (
            <p key={u.login}>
              <Avatar login={u.login} /> <Login user={u} />
            </p>
          ))
        )}
      </section>
      <section>
        <h3>Labels</h3>
        {issue.labels.length === 0 ? (
          <p class="muted-text">None yet</p>
        ) : (
          <p class="labels">
            {issue.labels.map((l) => (
              <GhLink key={l.id} to={{ kind: 'issues', owner, repo, state: 'open', labels: l.name, page: 1 }}>
                <LabelPill label={l} />
              </GhLink>
            ))}
          </p>
        )}
      </section>
      <section>
        <h3>Milestone</h3>
        {issue.milestone === null ? <p class="muted-text">No milestone</p> : <p>{issue.milestone.title}</p>}
      </section>
    </aside>
  );
}

/** One row of the issues (or pull requests) list. */
export function IssueRow({ owner, repo, issue, pull }: { owner: string; repo: string; issue: Issue; pull: boolean }) {
  const isPull = pull || issue.pull_request !== undefined;
  const verb = issue.state === 'open' ? 'opened' : isPull && issue.pull_request?.merged_at ? 'was merged' : 'was closed';
  const at = issue.state === 'open' ? issue.created_at : (issue.pull_request?.merged_at ?? issue.closed_at ?? issue.updated_at);
  return (
    <li class="issue-row">
      <ItemIcon issue={issue} />
      <div class="grow">
        <GhLink class="issue-title" to={isPull ? { kind: 'pull', owner, repo, number: issue.number, tab: 'conversation', page: 1 } : { kind: 'issue', owner, repo, number: issue.number }}>
          {issue.title}
        </GhLink>{' '}
        {issue.labels.map((l) => (
          <GhLink key={l.id} to={{ kind: 'issues', owner, repo, state: 'open', labels: l.name, page: 1 }}>
            <LabelPill label={l} />
          </GhLink>
        ))}
        <div class="muted-text small">
          #{issue.number} {issue.state === 'open' ? <>opened <When at={at} /> by {issue.user?.login ?? 'ghost'}</> : <>by {issue.user?.login ?? 'ghost'} {verb} <When at={at} /></>}
          {issue.draft === true && <> · Draft</>}
          {issue.milestone !== null && <> · {issue.milestone.title}</>}
        </div>
      </div>
      <div class="assignees">
        {issue.assignees.map((u) => (
          <Avatar key={u.login} login={u.login} />
        ))}
      </div>
      <div class="comments-count">
        {issue.comments > 0 && (
          <>
            <CommentIcon /> {issue.comments}
          </>
        )}
      </div>
    </li>
  );
}

/** The Open / Closed switch above a list, with each side's count. */
export function StateSwitch({ state, counts, to }: { state: IssueState; counts: { open: number | null; closed: number | null }; to: (state: IssueState) => View }) {
  return (
    <div class="states">
      <GhLink class={state === 'open' ? 'selected' : undefined} to={to('open')}>
        <IssueOpenIcon /> {counts.open === null ? '' : counts.open.toLocaleString('en-US')} Open
      </GhLink>
      <GhLink class={state === 'closed' ? 'selected' : undefined} to={to('closed')}>
        <IssueClosedIcon /> {counts.closed === null ? '' : counts.closed.toLocaleString('en-US')} Closed
      </GhLink>
      <GhLink class={state === 'all' ? 'selected' : undefined} to={to('all')}>
        All
      </GhLink>
    </div>
  );
}

/** `/repos/o/r/issues?state=&labels=&page=`. */
export function IssuesView({ gh, view }: { gh: GitHub; view: Extract<View, { kind: 'issues' }> }) {
  const base = repoPath(view.owner, view.repo);
  const list = useLoad(() => gh.get<Issue[]>(`${base}/issues`, { state: view.state, labels: view.labels, per_page: PER_PAGE, page: view.page }), [gh, base, view.state, view.labels, view.page]);
  const open = useLoad(() => countOf(gh, `${base}/issues`, { state: 'open', ...(view.labels === null ? {} : { labels: view.labels }) }), [gh, base, view.labels]);
  const closed = useLoad(() => countOf(gh, `${base}/issues`, { state: 'closed', ...(view.labels === null ? {} : { labels: view.labels }) }), [gh, base, view.labels]);
  return (
    <div class="list-view">
      <div class="list-bar">
        <GhLink class="btn" to={{ kind: 'labels', owner: view.owner, repo: view.repo }}>
          Labels
        </GhLink>
        {view.labels !== null && (
          <span class="filter">
            label: <strong>{view.labels}</strong>{' '}
            <GhLink to={{ ...view, labels: null, page: 1 }} title="Clear the label filter">
              ✕
            </GhLink>
          </span>
        )}
        <span class="muted-text small">As the API lists them, pull requests are among the issues, each with its pull request icon.</span>
      </div>
      <Box header={<StateSwitch state={view.state} counts={{ open: open.data, closed: closed.data }} to={(state) => ({ ...view, state, page: 1 })} />}>
        {list.data === null ? (
          <Pending error={list.error} what="the issues" />
        ) : list.data.data.length === 0 ? (
          <Blank title={view.labels === null ? 'No results' : `No ${view.state === 'all' ? '' : `${view.state} `}issues with the label ${view.labels}`} />
        ) : (
          <ul class="rows">
            {list.data.data.map((i) => (
              <IssueRow key={i.number} owner={view.owner} repo={view.repo} issue={i} pull={false} />
            ))}
          </ul>
        )}
      </Box>
      {list.data !== null && <Pager page={view.page} pages={list.data.pages} href={(page) => pathOf({ ...view, page })} />}
    </div>
  );
}

/** Title, number, state and who opened it: the head of an issue or a pull request. */
export function DiscussionHead({ title, number, badge, children }: { title: string; number: number; badge: ComponentChildren; children: ComponentChildren }) {
  return (
    <div class="discussion-head">
      <h1>
        <span class="title">{title}</span> <span class="number">#{number}</span>
      </h1>
      <div class="discussion-meta">
        {badge}
        <span class="muted-text">{children}</span>
      </div>
    </div>
  );
}

/** `/repos/o/r/issues/<n>`: the issue and its comments. A pull request's number moves to its pull request page, as GitHub's does. */
export function IssueView({ gh, view }: { gh: GitHub; view: Extract<View, { kind: 'issue' }> }) {
  const base = useBase();
  const one = useLoad(() => gh.body<Issue>(`${repoPath(view.owner, view.repo)}/issues/${view.number}`), [gh, view.owner, view.repo, view.number]);
  const isPull = one.data?.pull_request !== undefined;
  useEffect(() => {
    if (isPull) go(base, pathOf({ kind: 'pull', owner: view.owner, repo: view.repo, number: view.number, tab: 'conversation', page: 1 }), { replace: true });
  }, [isPull]);
  if (one.data === null || isPull) return <Pending error={one.error} what={`issue #${view.number}`} />;
  const i = one.data;
  return (
    <div class="discussion">
      <DiscussionHead title={i.title} number={i.number} badge={<StateBadge issue={i} />}>
        <strong>{i.user?.login ?? 'ghost'}</strong> opened this issue <When at={i.created_at} /> · {i.comments} {i.comments === 1 ? 'comment' : 'comments'}
      </DiscussionHead>
      <div class="layout-sidebar">
        <div class="main timeline">
          <TimelineComment user={i.user} at={i.created_at} association={i.author_association} body={i.body} />
          <Comments gh={gh} owner={view.owner} repo={view.repo} number={i.number} total={i.comments} />
          {i.state === 'closed' && (
            <p class="event">
              <IssueClosedIcon /> <strong>{i.closed_by?.login ?? 'someone'}</strong> closed this {i.state_reason === 'not_planned' ? 'as not planned' : 'as completed'} <When at={i.closed_at} />
            </p>
          )}
          {i.locked && (
            <p class="event">
              <LockIcon /> This conversation is locked{i.state === 'closed' ? '' : ' and limited to collaborators'}.
            </p>
          )}
        </div>
        <Sidebar issue={i} owner={view.owner} repo={view.repo} />
      </div>
    </div>
  );
}

/** `/repos/o/r/labels`: every label, with its description and a link to its open issues. */
export function LabelsView({ gh, view }: { gh: GitHub; view: Extract<View, { kind: 'labels' }> }) {
  const labels = useLoad(() => gh.get<Label[]>(`${repoPath(view.owner, view.repo)}/labels`, { per_page: 100 }), [gh, view.owner, view.repo]);
  return (
    <div class="list-view">
      {labels.data === null ? (
        <Pending error={labels.error} what="the labels" />
      ) : (
        <Box header={<strong>{labels.data.data.length} labels</strong>}>
          {labels.data.data.length === 0 ? (
            <Blank title="No labels" />
          ) : (
            <ul class="rows">
              {labels.data.data.map((l) => (
                <li key={l.id} class="label-row">
                  <GhLink to={{ kind: 'issues', owner: view.owner, repo: view.repo, state: 'open', labels: l.name, page: 1 }}>
                    <LabelPill label={l} />
                  </GhLink>
                  <span class="muted-text grow">{l.description ?? ''}</span>
                </li>
              ))}
            </ul>
          )}
        </Box>
      )}
    </div>
  );
}
