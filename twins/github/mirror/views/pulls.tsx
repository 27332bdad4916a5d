/**
 * Pull requests as GitHub shows them: the list, and one pull request with its tabs —
 * Conversation (the description, comments and reviews in time order, the merge box), Commits,
 * Files changed (its diff, 100 files a page).
 */
import type { ComponentChildren } from 'preact';
import { repoPath, type GitHub } from '../github.js';
import { CommentIcon, CommitIcon, FileIcon, IssueOpenIcon, MergedIcon, PullClosedIcon } from '../icons.js';
import { useLoad } from '../../../../pages/ui/index.js';
import { GhLink } from '../nav.js';
import { Avatar, Blank, Box, Counter, Pager, Pending, StateBadge, When } from '../parts.js';
import { pathOf, type PullTab, type View } from '../routes.js';
import type { Comment, Commit, DiffFile, Issue, Pull, Review, ReviewComment } from '../types.js';
import { CommitList } from './commits.js';
import { FileDiffs } from './diff.js';
import { countOf } from './frame.js';
import { DiscussionHead, IssueRow, Sidebar, StateSwitch, TimelineComment } from './issues.js';

const PER_PAGE = 25;

/** `/repos/o/r/pulls?state=&page=`. */
export function PullsView({ gh, view }: { gh: GitHub; view: Extract<View, { kind: 'pulls' }> }) {
  const base = repoPath(view.owner, view.repo);
  const list = useLoad(() => gh.get<Pull[]>(`${base}/pulls`, { state: view.state, per_page: PER_PAGE, page: view.page }), [gh, base, view.state, view.page]);
  const open = useLoad(() => countOf(gh, `${base}/pulls`, { state: 'open' }), [gh, base]);
  const closed = useLoad(() => countOf(gh, `${base}/pulls`, { state: 'closed' }), [gh, base]);
  // A pull request in the list as the issue row draws it.
  const asIssue = (p: Pull): Issue => ({
    number: p.number, title: p.title, body: p.body, state: p.state, locked: p.locked, user: p.user, labels: p.labels, assignees: p.assignees,
    milestone: p.milestone, comments: 0, created_at: p.created_at, updated_at: p.updated_at, closed_at: p.closed_at,
    pull_request: { url: '', merged_at: p.merged_at }, draft: p.draft ?? false,
  });
  return (
    <div class="list-view">
      <Box header={<StateSwitch state={view.state} counts={{ open: open.data, closed: closed.data }} to={(state) => ({ ...view, state, page: 1 })} />}>
        {list.data === null ? (
          <Pending error={list.error} what="the pull requests" />
        ) : list.data.data.length === 0 ? (
          <Blank title={view.state === 'open' ? 'There aren’t any open pull requests.' : 'No results'} />
        ) : (
          <ul class="rows">
            {list.data.data.map((p) => (
              <IssueRow key={p.number} owner={view.owner} repo={view.repo} issue={asIssue(p)} pull />
            ))}
          </ul>
        )}
      </Box>
      {list.data !== null && <Pager page={view.page} pages={list.data.pages} href={(page) => pathOf({ ...view, page })} />}
    </div>
  );
}

type Event =
  | { at: string; kind: 'comment'; comment: Comment }
  | { at: string; kind: 'review'; review: Review; comments: ReviewComment[] };

const REVIEW_VERB: Record<string, string> = {
  APPROVED: 'approved these changes',
  CHANGES_REQUESTED: 'requested changes',
  COMMENTED: 'reviewed',
  DISMISSED: 'reviewed (dismissed)',
  PENDING: 'started a review',
};

function ReviewItem({ review, comments }: { review: Review; comments: ReviewComment[] }) {
  return (
    <TimelineComment user={review.user} at={review.submitted_at ?? ''} body={review.body} verb={REVIEW_VERB[review.state] ?? 'reviewed'}>
      {comments.map((c) => (
        <div key={c.id} class="review-comment">
          <div class="muted-text small">
            <strong>{c.path}</strong>
            {c.line !== null && c.line !== undefined && <> line {c.line}</>}
          </div>
          {c.diff_hunk !== undefined && <pre class="hunk-excerpt">{c.diff_hunk.split('\n').slice(-4).join('\n')}</pre>}
          <p>
            <Avatar login={c.user?.login ?? null} size={16} /> <strong>{c.user?.login ?? 'ghost'}</strong>: {c.body}
          </p>
        </div>
      ))}
    </TimelineComment>
  );
}

/** The conversation: description, comments and reviews (with their line comments) in time order, then the merge box. */
function Conversation({ gh, view, pull }: { gh: GitHub; view: Extract<View, { kind: 'pull' }>; pull: Pull }) {
  const base = repoPath(view.owner, view.repo);
  const events = useLoad(async (): Promise<Event[]> => {
    const [comments, reviews, reviewComments] = await Promise.all([
      gh.body<Comment[]>(`${base}/issues/${pull.number}/comments`, { per_page: 100 }),
      gh.body<Review[]>(`${base}/pulls/${pull.number}/reviews`, { per_page: 100 }),
      gh.body<ReviewComment[]>(`${base}/pulls/${pull.number}/comments`, { per_page: 100 }),
    ]);
    const out: Event[] = comments.map((c) => ({ at: c.created_at, kind: 'comment', comment: c }));
    for (const r of reviews) {
      const mine = reviewComments.filter((c) => c.pull_request_review_id === r.id);
      // A review with neither a body nor line comments (GitHub shows it as a one-line event) still counts.
      out.push({ at: r.submitted_at ?? '', kind: 'review', review: r, comments: mine });
    }
    return out.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  }, [gh, base, pull.number]);
  return (
    <div class="layout-sidebar">
      <div class="main timeline">
        <TimelineComment user={pull.user} at={pull.created_at} body={pull.body} verb="opened this pull request" />
        {events.data === null ? (
          <Pending error={events.error} what="the conversation" />
        ) : (
          events.data.map((e) =>
            e.kind === 'comment' ? (
              <TimelineComment key={`c${e.comment.id}`} user={e.comment.user} at={e.comment.created_at} association={e.comment.author_association} body={e.comment.body} />
            ) : (
              <ReviewItem key={`r${e.review.id}`} review={e.review} comments={e.comments} />
            ),
          )
        )}
        <MergeBox pull={pull} />
      </div>
      <Sidebar issue={pull} owner={view.owner} repo={view.repo} reviewers={pull.requested_reviewers ?? []} />
    </div>
  );
}

/** Where the pull request stands: merged, closed, or open with or without conflicts (read-only: no buttons). */
function MergeBox({ pull }: { pull: Pull }) {
  let icon: ComponentChildren;
  let title: string;
  let line: ComponentChildren;
  if (pull.merged === true || pull.merged_at !== null) {
    icon = <MergedIcon />;
    title = 'Pull request successfully merged and closed';
    line = (
      <>
        The <code class="branch">{pull.head.ref}</code> branch was merged into <code class="branch">{pull.base.ref}</code>
        {pull.merge_commit_sha !== null && pull.merge_commit_sha !== undefined && <> as {pull.merge_commit_sha.slice(0, 7)}</>}.
      </>
    );
  } else if (pull.state === 'closed') {
    icon = <PullClosedIcon />;
    title = 'Closed with unmerged commits';
    line = 'This pull request is closed.';
  } else if (pull.mergeable === false) {
    icon = <PullClosedIcon />;
    title = 'This branch has conflicts that must be resolved';
    line = 'The twin merges whole files: a file both sides changed is a conflict.';
  } else {
    icon = <IssueOpenIcon />;
    title = pull.draft === true ? 'This pull request is still a work in progress' : 'This branch has no conflicts with the base branch';
    line = pull.mergeable === null || pull.mergeable === undefined ? 'Mergeability is being checked.' : 'Merging can be performed automatically (through the API: this mirror only reads).';
  }
  return (
    <div class={`timeline-item merge-box ${pull.merged_at !== null ? 'merged' : pull.state}`}>
      <span class="merge-icon">{icon}</span>
      <Box>
        <div class="merge-body">
          <strong>{title}</strong>
          <p class="muted-text">{line}</p>
        </div>
      </Box>
    </div>
  );
}

function CommitsTab({ gh, view }: { gh: GitHub; view: Extract<View, { kind: 'pull' }> }) {
  const commits = useLoad(() => gh.body<Commit[]>(`${repoPath(view.owner, view.repo)}/pulls/${view.number}/commits`, { per_page: 100 }), [gh, view.owner, view.repo, view.number]);
  if (commits.data === null) return <Pending error={commits.error} what="the commits" />;
  if (commits.data.length === 0) return <Blank title="No commits" />;
  return <CommitList owner={view.owner} repo={view.repo} commits={commits.data} />;
}

function FilesTab({ gh, view, pull, page }: { gh: GitHub; view: Extract<View, { kind: 'pull' }>; pull: Pull; page: number }) {
  const files = useLoad(() => gh.get<DiffFile[]>(`${repoPath(view.owner, view.repo)}/pulls/${view.number}/files`, { per_page: 100, page }), [gh, view.owner, view.repo, view.number, page]);
  if (files.data === null) return <Pending error={files.error} what="the changed files" />;
  return (
    <>
      <FileDiffs files={files.data.data} additions={files.data.pages.next === null && page === 1 ? pull.additions : undefined} deletions={files.data.pages.next === null && page === 1 ? pull.deletions : undefined} />
      {(files.data.pages.next !== null || page > 1) && <p class="note">Files {(page - 1) * 100 + 1}–{(page - 1) * 100 + files.data.data.length} of {pull.changed_files ?? '?'}.</p>}
    </>
  );
}

/** `/repos/o/r/pulls/<n>[/commits|/files]`. */
export function PullView({ gh, view }: { gh: GitHub; view: Extract<View, { kind: 'pull' }> }) {
  const one = useLoad(() => gh.body<Pull>(`${repoPath(view.owner, view.repo)}/pulls/${view.number}`), [gh, view.owner, view.repo, view.number]);
  if (one.data === null) return <Pending error={one.error} what={`pull request #${view.number}`} />;
  const p = one.data;
  const tab = (t: PullTab, icon: ComponentChildren, name: string, n: number | undefined) => (
    <li>
      <GhLink class={view.tab === t ? 'selected' : undefined} to={{ ...view, tab: t, page: 1 }}>
        {icon} {name} <Counter n={n} />
      </GhLink>
    </li>
  );
  const merged = p.merged_at !== null;
  return (
    <div class="discussion">
      <DiscussionHead title={p.title} number={p.number} badge={<StateBadge pull={p} />}>
        <strong>{p.user?.login ?? 'ghost'}</strong> {merged ? 'merged' : 'wants to merge'} {p.commits ?? '?'} {p.commits === 1 ? 'commit' : 'commits'} into <code class="branch">{p.base.label}</code> from{' '}
        <code class="branch">{p.head.label}</code>
        {merged && <When at={p.merged_at} prefix=" on " />}
      </DiscussionHead>
      <nav class="gh-tabs pull-tabs" aria-label="Pull request">
        <ul>
          {tab('conversation', <CommentIcon />, 'Conversation', p.comments)}
          {tab('commits', <CommitIcon />, 'Commits', p.commits)}
          {tab('files', <FileIcon />, 'Files changed', p.changed_files)}
          <li class="spacer" />
          <li class="diffstat-total">
            <span class="add-count">+{(p.additions ?? 0).toLocaleString('en-US')}</span> <span class="del-count">−{(p.deletions ?? 0).toLocaleString('en-US')}</span>
          </li>
        </ul>
      </nav>
      {view.tab === 'conversation' && <Conversation gh={gh} view={view} pull={p} />}
      {view.tab === 'commits' && <CommitsTab gh={gh} view={view} />}
      {view.tab === 'files' && <FilesTab gh={gh} view={view} pull={p} page={view.page} />}
      {view.tab === 'files' && <FilesPager view={view} total={p.changed_files ?? 0} />}
    </div>
  );
}

/** The files' pages: `pulls.listFiles` pages by 100; the count is the pull request's `changed_files`. */
function FilesPager({ view, total }: { view: Extract<View, { kind: 'pull' }>; total: number }) {
  const last = Math.max(1, Math.ceil(total / 100));
  if (last === 1) return null;
  const page = view.page;
  return <Pager page={page} pages={{ next: page < last ? page + 1 : null, prev: page > 1 ? page - 1 : null, first: 1, last }} href={(n) => pathOf({ ...view, page: n })} />;
}
