/**
 * The mirror's URLs are the twin's own API paths (`{world_url}/github/repos/o/r/issues/7`): the
 * host answers a browser's navigation to any of them with the mirror's shell. This maps such a
 * path (with its query) to the view that shows it, and a view back to its path. Pure: no DOM,
 * so it is unit-tested in Node (routes.test.ts).
 */

export type IssueState = 'open' | 'closed' | 'all';
export type PullTab = 'conversation' | 'commits' | 'files';

interface InRepo {
  owner: string;
  repo: string;
}

export type View =
  /** `/user/repos`: the signed-in account's repositories (the session acts as the site admin). The home view. */
  | { kind: 'home'; page: number }
  /** `/repositories`: every repository of the world, from the twin's `repositories` store (the twin serves no such path). */
  | { kind: 'all'; after: string | null }
  /** `/users/<u>`, `/users/<u>/repos`, `/orgs/<o>`, `/orgs/<o>/repos`. */
  | { kind: 'owner'; owner: string; org: boolean; page: number }
  /** `/repos/<o>/<r>` (and `…/readme`): the repository's code at its default branch. */
  | ({ kind: 'repo' } & InRepo)
  /** `/repos/<o>/<r>/contents[/<path>][?ref=]` (and `…/branches/<name>`): a folder or a file; which, the answer says. */
  | ({ kind: 'contents'; path: string; ref: string | null } & InRepo)
  /** `/repos/<o>/<r>/git/trees/<sha>`: a tree by id. */
  | ({ kind: 'git-tree'; sha: string } & InRepo)
  /** `/repos/<o>/<r>/git/blobs/<sha>`: a blob by id. */
  | ({ kind: 'git-blob'; sha: string } & InRepo)
  /** `/repos/<o>/<r>/commits[?sha=&path=&page=]`. */
  | ({ kind: 'commits'; ref: string | null; path: string | null; page: number } & InRepo)
  /** `/repos/<o>/<r>/commits/<ref>` and `/repos/<o>/<r>/git/commits/<sha>`: one commit with its diff. */
  | ({ kind: 'commit'; sha: string; page: number } & InRepo)
  /** `/repos/<o>/<r>/branches[?page=]`. */
  | ({ kind: 'branches'; page: number } & InRepo)
  /** `/repos/<o>/<r>/issues[?state=&labels=&page=]`: issues only (the API's list holds pull requests too; the view leaves them out). */
  | ({ kind: 'issues'; state: IssueState; labels: string | null; page: number } & InRepo)
  /** `/repos/<o>/<r>/issues/<n>` (and `…/comments`): an issue with its comments, or a pull request's conversation. */
  | ({ kind: 'issue'; number: number } & InRepo)
  /** `/repos/<o>/<r>/pulls[?state=&page=]`. */
  | ({ kind: 'pulls'; state: IssueState; page: number } & InRepo)
  /** `/repos/<o>/<r>/pulls/<n>`, `…/commits`, `…/files`. */
  | ({ kind: 'pull'; number: number; tab: PullTab; page: number } & InRepo)
  /** `/repos/<o>/<r>/compare/<base>...<head>`. */
  | ({ kind: 'compare'; basehead: string } & InRepo)
  /** `/repos/<o>/<r>/labels`. */
  | ({ kind: 'labels' } & InRepo)
  /** Anything else: said so, with the repository's header when the path names one. */
  | { kind: 'unknown'; path: string; repo: InRepo | null };

/** The home view's path: the twin answers it for the session (the site admin's repositories). */
export const HOME_PATH = '/user/repos';

/**
 * The vendor path of a page at `pathname` under the mirror's base (`{worldUrl}/github`), or null
 * when the page is not under it. `…/mirror` and `…/mirror/` (where the host serves the shell
 * keyless) give null too: the page moves to the home view from there.
 */
export function vendorPathOf(pathname: string, base: string): string | null {
  if (!pathname.startsWith(`${base}/`)) return null;
  const rest = pathname.slice(base.length);
  if (rest === '/mirror' || rest.startsWith('/mirror/')) return null;
  return rest;
}

function positive(raw: string | null, fallback: number): number {
  if (raw === null || !/^\d{1,9}$/.test(raw)) return fallback;
  const n = Number(raw);
  return n >= 1 ? n : fallback;
}

function stateOf(raw: string | null): IssueState {
  return raw === 'closed' || raw === 'all' ? raw : 'open';
}

function nonEmpty(raw: string | null): string | null {
  return raw === null || raw === '' ? null : raw;
}

/** Each segment decoded; null when one is not valid percent-encoding. */
function segmentsOf(path: string): string[] | null {
  try {
    return path.split('/').filter((s) => s !== '').map((s) => decodeURIComponent(s));
  } catch {
    return null;
  }
}

/** The view that shows a vendor path (`/repos/o/r/issues/7`) with its query (`?state=closed`, or ``). */
export function viewOf(path: string, search = ''): View {
  const q = new URLSearchParams(search);
  const page = positive(q.get('page'), 1);
  const s = segmentsOf(path);
  const unknown = (repo: InRepo | null = null): View => ({ kind: 'unknown', path, repo });
  if (s === null) return unknown();
  const [a, b, c] = s;
  if (s.length === 0 || (a === 'user' && (s.length === 1 || (b === 'repos' && s.length === 2)))) return { kind: 'home', page };
  if (a === 'repositories' && s.length === 1) return { kind: 'all', after: nonEmpty(q.get('after')) };
  if ((a === 'users' || a === 'orgs') && b !== undefined && (s.length === 2 || (s.length === 3 && c === 'repos'))) {
    return { kind: 'owner', owner: b, org: a === 'orgs', page };
  }
  if (a !== 'repos' || b === undefined || c === undefined) return unknown();
  const r: InRepo = { owner: b, repo: c };
  const rest = s.slice(3);
  const [x, y, z] = rest;
  if (x === undefined || (x === 'readme' && rest.length === 1)) return { kind: 'repo', ...r };
  switch (x) {
    case 'contents':
      return { kind: 'contents', ...r, path: rest.slice(1).join('/'), ref: nonEmpty(q.get('ref')) };
    case 'branches':
      if (rest.length === 1) return { kind: 'branches', ...r, page };
      return { kind: 'contents', ...r, path: '', ref: rest.slice(1).join('/') };
    case 'commits':
      if (rest.length === 1) return { kind: 'commits', ...r, ref: nonEmpty(q.get('sha')), path: nonEmpty(q.get('path')), page };
      // `commits/<ref>/status(es)` (one segment of ref, as the twin routes them) are the ref's statuses: shown as the commit.
      if (rest.length === 3 && (z === 'status' || z === 'statuses')) return { kind: 'commit', ...r, sha: y as string, page };
      return { kind: 'commit', ...r, sha: rest.slice(1).join('/'), page };
    case 'git':
      if (z !== undefined && rest.length === 3 && y === 'commits') return { kind: 'commit', ...r, sha: z, page: 1 };
      if (z !== undefined && rest.length === 3 && y === 'trees') return { kind: 'git-tree', ...r, sha: z };
      if (z !== undefined && rest.length === 3 && y === 'blobs') return { kind: 'git-blob', ...r, sha: z };
      return unknown(r);
    case 'issues': {
      if (rest.length === 1) return { kind: 'issues', ...r, state: stateOf(q.get('state')), labels: nonEmpty(q.get('labels')), page };
      const number = positive(y ?? null, 0);
      if (number > 0 && (rest.length === 2 || ['comments', 'labels', 'assignees', 'events', 'timeline'].includes(z ?? ''))) return { kind: 'issue', ...r, number };
      return unknown(r);
    }
    case 'pulls': {
      if (rest.length === 1) return { kind: 'pulls', ...r, state: stateOf(q.get('state')), page };
      const number = positive(y ?? null, 0);
      if (number === 0) return unknown(r);
      if (rest.length === 2) return { kind: 'pull', ...r, number, tab: 'conversation', page: 1 };
      // The files are paged (`pulls.listFiles`, 100 a page); the other tabs show one page.
      if (rest.length === 3 && z === 'files') return { kind: 'pull', ...r, number, tab: 'files', page };
      if (rest.length === 3 && z === 'commits') return { kind: 'pull', ...r, number, tab: 'commits', page: 1 };
      if (rest.length >= 3 && ['reviews', 'comments', 'requested_reviewers', 'merge'].includes(z ?? '')) return { kind: 'pull', ...r, number, tab: 'conversation', page: 1 };
      return unknown(r);
    }
    case 'compare':
      if (rest.length >= 2) return { kind: 'compare', ...r, basehead: rest.slice(1).join('/') };
      return unknown(r);
    case 'labels':
      if (rest.length === 1) return { kind: 'labels', ...r };
      return unknown(r);
    default:
      return unknown(r);
  }
}

const enc = encodeURIComponent;
/** A path of several segments (`src/lib/a b.ts`), each encoded, the slashes kept. */
const encPath = (path: string): string => path.split('/').filter((p) => p !== '').map(enc).join('/');

function withQuery(path: string, query: Record<string, string | number | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    // Defaults are left out, so a view has one path.
    if (v === null || (k === 'page' && v === 1) || (k === 'state' && v === 'open')) continue;
    q.set(k, String(v));
  }
  const s = q.toString();
  return s === '' ? path : `${path}?${s}`;
}

/** The vendor path (with its query) that shows a view; `viewOf(pathOf(v))` is `v`. */
export function pathOf(view: View): string {
  if (view.kind === 'home') return withQuery(HOME_PATH, { page: view.page });
  if (view.kind === 'all') return withQuery('/repositories', { after: view.after });
  if (view.kind === 'owner') return withQuery(`/${view.org ? 'orgs' : 'users'}/${enc(view.owner)}/repos`, { page: view.page });
  if (view.kind === 'unknown') return view.path;
  const r = `/repos/${enc(view.owner)}/${enc(view.repo)}`;
  switch (view.kind) {
    case 'repo':
      return r;
    case 'contents':
      return withQuery(view.path === '' ? `${r}/contents` : `${r}/contents/${encPath(view.path)}`, { ref: view.ref });
    case 'git-tree':
      return `${r}/git/trees/${enc(view.sha)}`;
    case 'git-blob':
      return `${r}/git/blobs/${enc(view.sha)}`;
    case 'commits':
      return withQuery(`${r}/commits`, { sha: view.ref, path: view.path, page: view.page });
    case 'commit':
      return withQuery(`${r}/commits/${encPath(view.sha)}`, { page: view.page });
    case 'branches':
      return withQuery(`${r}/branches`, { page: view.page });
    case 'issues':
      return withQuery(`${r}/issues`, { state: view.state, labels: view.labels, page: view.page });
    case 'issue':
      return `${r}/issues/${view.number}`;
    case 'pulls':
      return withQuery(`${r}/pulls`, { state: view.state, page: view.page });
    case 'pull':
      return view.tab === 'conversation' ? `${r}/pulls/${view.number}` : withQuery(`${r}/pulls/${view.number}/${view.tab}`, { page: view.tab === 'files' ? view.page : 1 });
    case 'compare':
      return `${r}/compare/${encPath(view.basehead)}`;
    case 'labels':
      return `${r}/labels`;
  }
}

/** The repository a view is inside, for the header and its tabs; null outside one. */
export function repoOf(view: View): InRepo | null {
  if (view.kind === 'home' || view.kind === 'all' || view.kind === 'owner') return null;
  if (view.kind === 'unknown') return view.repo;
  return { owner: view.owner, repo: view.repo };
}
