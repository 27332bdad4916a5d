/**
 * `GET /search/issues`: issues and pull requests by GitHub's query syntax — free words (in
 * title and body unless `in:` narrows), `repo:`, `user:`/`org:`, `is:`/`type:`/`state:`,
 * `author:`, `assignee:`, `mentions:`, `involves:`, `label:` (and `-label:`), `no:`,
 * `milestone:`, `comments:`, `created:`/`updated:`/`closed:` with `>`, `>=`, `<`, `<=`, `a..b`,
 * and any qualifier negated with `-`. Only repositories the caller can read are searched.
 */
import type { ReadTree } from '../../../../sdk/twin/index.js';
import { pageOf, paginate, str, type Call, type Obj } from '../lib/http.js';
import { GhError, validation } from '../errors.js';
import { loadUser } from '../lib/users.js';
import { issuesOf, lookups, presentIssue, sortIssues, type IssueLookups, type StoredIssue } from './issues.js';
import { allRepos, canRead, repoByName, type StoredRepo } from './repos.js';
import { listRange } from '../lib/records.js';

interface Term { key: string | null; value: string; negated: boolean }

export function tokenize(q: string): Term[] {
  const out: Term[] = [];
  const re = /(-?)(?:([A-Za-z_]+):)?("([^"]*)"|[^\s"]+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(q)) !== null) {
    const value = m[4] ?? (m[3] as string);
    const key = m[2] === undefined ? null : m[2].toLowerCase();
    out.push({ key, value, negated: m[1] === '-' });
  }
  return out;
}

function compareRange(actual: string | number, spec: string): boolean {
  const m = /^(>=|<=|>|<)?(.+)$/.exec(spec);
  if (m === null) return false;
  const range = /^(.+)\.\.(.+)$/.exec(m[2] as string);
  const norm = (v: string): string | number => (typeof actual === 'number' ? Number(v) : v);
  const a = typeof actual === 'number' ? actual : actual.slice(0, 20);
  if (range !== null) {
    const lo = range[1] as string, hi = range[2] as string;
    return (lo === '*' || a >= norm(lo)) && (hi === '*' || (typeof a === 'number' ? a <= (norm(hi) as number) : (a as string).slice(0, hi.length) <= hi));
  }
  const v = norm(m[2] as string);
  switch (m[1]) {
    case '>': return typeof a === 'number' ? a > (v as number) : (a as string).slice(0, (v as string).length) > (v as string);
    case '>=': return a >= v;
    case '<': return a < v;
    case '<=': return typeof a === 'number' ? a <= (v as number) : (a as string).slice(0, (v as string).length) <= (v as string);
    default: return typeof a === 'number' ? a === v : (a as string).startsWith(v as string);
  }
}

interface Candidate {
  repo: StoredRepo;
  issue: StoredIssue;
  lk: IssueLookups;
  merged: boolean;
  /** The lower-cased text the query's words are looked for in, made once per issue and `in:` choice, not once per word. */
  hay?: Map<string, string>;
}

function matches(tree: ReadTree, c: Candidate, t: Term, words: { inTitle: boolean; inBody: boolean; inComments: boolean }): boolean {
  const { issue, lk, repo } = c;
  const v = t.value.toLowerCase();
  const labelNames = (): string[] => issue.labels.map((id) => lk.labels.get(id)?.name.toLowerCase() ?? '');
  const mentions = (login: string): boolean => new RegExp(`(^|[^A-Za-z0-9-])@${login.replace(/[^A-Za-z0-9-]/g, '')}(?![A-Za-z0-9-])`, 'i').test(`${issue.title}\n${issue.body ?? ''}`);
  switch (t.key) {
    case null: {
      const key = `${Number(words.inTitle)}${Number(words.inBody)}${Number(words.inComments)}`;
      let hay = c.hay?.get(key);
      if (hay === undefined) {
        hay = '';
        if (words.inTitle) hay += issue.title + '\n';
        if (words.inBody) hay += (issue.body ?? '') + '\n';
        if (words.inComments) {
          const p = `${repo.id}:${String(issue.number).padStart(10, '0')}:`;
          for (const i of listRange(tree, 'issue_comment', p, `${repo.id}:${String(issue.number).padStart(10, '0')};`)) {
            hay += (tree.get<{ body: string }>('comment', `${repo.id}:${i.id.slice(p.length)}`)?.body ?? '') + '\n';
          }
        }
        hay = hay.toLowerCase();
        (c.hay ??= new Map()).set(key, hay);
      }
      return hay.includes(v);
    }
    case 'repo': return `${repo.owner}/${repo.name}`.toLowerCase() === v;
    case 'user': case 'org': case 'owner': return repo.owner.toLowerCase() === v;
    case 'is': case 'type': case 'state':
      if (v === 'issue') return !issue.pull;
      if (v === 'pr' || v === 'pull-request') return issue.pull;
      if (v === 'open' || v === 'closed') return issue.state === v;
      if (v === 'merged') return c.merged;
      if (v === 'unmerged') return issue.pull && !c.merged && issue.state === 'closed';
      if (v === 'locked') return issue.locked;
      if (v === 'unlocked') return !issue.locked;
      if (v === 'public') return !repo.private;
      if (v === 'private') return repo.private;
      return false;
    case 'author': return issue.user === v;
    case 'assignee': return issue.assignees.includes(v);
    case 'mentions': return mentions(v);
    case 'involves': return issue.user === v || issue.assignees.includes(v) || mentions(v);
    case 'label': return v.split(',').some((l) => labelNames().includes(l));
    case 'milestone': {
      const m = issue.milestone === null ? undefined : lk.milestones.get(issue.milestone);
      return m !== undefined && m.title.toLowerCase() === v;
    }
    case 'no':
      if (v === 'label') return issue.labels.length === 0;
      if (v === 'assignee') return issue.assignees.length === 0;
      if (v === 'milestone') return issue.milestone === null;
      return false;
    case 'comments': return compareRange(issue.comments, t.value);
    case 'created': return compareRange(issue.created_at, t.value);
    case 'updated': return compareRange(issue.updated_at, t.value);
    case 'closed': return issue.closed_at !== null && compareRange(issue.closed_at, t.value);
    case 'in': return true;
    default: return false;
  }
}

const KNOWN = new Set(['repo', 'user', 'org', 'owner', 'is', 'type', 'state', 'author', 'assignee', 'mentions', 'involves', 'label', 'milestone', 'no', 'comments', 'created', 'updated', 'closed', 'in']);

export function searchIssues(call: Call): { body: Obj } {
  const { tree } = call.ctx;
  const q = str(call.req.query, 'q');
  if (q === undefined || q.trim() === '') throw validation([{ resource: 'Search', field: 'q', code: 'missing' }]);
  if (q.length > 256) throw validation([{ resource: 'Search', field: 'q', code: 'invalid', message: 'The search is longer than 256 characters.' }]);
  const all = tokenize(q);
  // `sort:comments-desc` in the query sets the order as the sort parameter does.
  const sortTerm = all.find((t) => t.key === 'sort');
  const terms = all.filter((t) => t.key !== 'sort');
  // Unknown qualifiers are searched as text by GitHub; the twin does the same.
  for (const t of terms) if (t.key !== null && !KNOWN.has(t.key)) { t.value = `${t.key}:${t.value}`; t.key = null; }
  const ins = terms.filter((t) => t.key === 'in').map((t) => t.value.toLowerCase());
  const words = ins.length === 0 ? { inTitle: true, inBody: true, inComments: false } : { inTitle: ins.includes('title'), inBody: ins.includes('body'), inComments: ins.includes('comments') };
  let repos: StoredRepo[];
  const repoTerms = terms.filter((t) => t.key === 'repo' && !t.negated);
  if (repoTerms.length > 0) {
    repos = [];
    for (const t of repoTerms) {
      const [owner, name] = t.value.split('/');
      const r = owner === undefined || name === undefined ? undefined : repoByName(tree, owner, name);
      if (r === undefined || !canRead(tree, call.caller, r)) {
        throw validation([{ resource: 'Search', field: 'q', code: 'invalid', message: 'The listed users and repositories cannot be searched either because the resources do not exist or you do not have permission to view them.' }]);
      }
      repos.push(r);
    }
  } else repos = allRepos(tree).filter((r) => canRead(tree, call.caller, r));
  const userTerms = terms.filter((t) => (t.key === 'user' || t.key === 'org') && !t.negated);
  for (const t of userTerms) if (loadUser(tree, t.value) === undefined) throw validation([{ resource: 'Search', field: 'q', code: 'invalid', message: 'The listed users cannot be searched either because the users do not exist or you do not have permission to view the users.' }]);
  const hits: Candidate[] = [];
  for (const repo of repos) {
    const issues = issuesOf(tree, repo.id);
    if (issues.length === 0) continue;
    const lk = lookups(tree, repo);
    for (const issue of issues) {
      const merged = issue.pull && tree.get<{ merged: boolean }>('pull', `${repo.id}:${String(issue.number).padStart(10, '0')}`)?.merged === true;
      const c: Candidate = { repo, issue, lk, merged };
      if (terms.every((t) => matches(tree, c, t, words) !== t.negated)) hits.push(c);
    }
  }
  const [termSort, termOrder] = (sortTerm?.value ?? '').toLowerCase().split('-');
  const sort = str(call.req.query, 'sort') ?? termSort;
  const order = (str(call.req.query, 'order') ?? termOrder ?? 'desc') === 'asc' ? 'asc' : 'desc';
  const byIssue = new Map(hits.map((h) => [h.issue, h]));
  const sorted = sortIssues(hits.map((h) => h.issue), sort === 'comments' ? 'comments' : sort === 'updated' ? 'updated' : 'created', order).map((i) => byIssue.get(i) as Candidate);
  const { page, perPage } = pageOf(call.req);
  if ((page - 1) * perPage >= 1000 && sorted.length > 0) throw new GhError(422, 'Only the first 1000 search results are available');
  const items = paginate(call, sorted).map((h) => ({ ...presentIssue(tree, h.repo, h.issue, h.lk), score: 1 }));
  return { body: { total_count: sorted.length, incomplete_results: false, items } };
}
