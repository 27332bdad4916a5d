/**
 * A refresh: the repository first (every other record is keyed by its id), then its labels,
 * milestones, hooks and issues, each a list followed page by page through `Link`, and its git
 * data (`files.ts`). Each read writes what its answer shows.
 *
 * Counters (`counter/<name>`: the next number of a sequence) are raised past the real ids and
 * numbers at the end of each list, so an issue the world opens in the copy gets the number
 * after the real ones, and a label, milestone or hook it makes an id no real one has.
 */
import type { RootAnswer, RootInfo, RootRead, TwinContext } from '../../../../sdk/twin/types.js';
import { answerFailed, isObj, jsonOf, list, nextPage, num, obj, parseRoot, rootError, succeeded, type Obj, type RepoRoot } from './answers.js';
import { copyHook, copyIssue, copyLabel, copyMilestone, copyRepo, raiseCounter } from './copy.js';
import { filesData, readBlob, readCommit, readKeep, readRefs, readTree, refReads } from './files.js';

type ListStep = 'labels' | 'milestones' | 'hooks' | 'issues';

interface ListData { step: ListStep; repoId: number; page: number; maxId: number; maxNumber: number }

/** Pages of 100 read of each list at most: past them, the rest is not copied (issues come newest first, so the oldest are left). */
export const MAX_PAGES: Record<ListStep, number> = { labels: 10, milestones: 10, hooks: 2, issues: 100 };

const LISTS: Record<ListStep, { path: string; query: Record<string, string>; what: string }> = {
  labels: { path: '/labels', query: { per_page: '100' }, what: 'the labels' },
  milestones: { path: '/milestones', query: { state: 'all', per_page: '100' }, what: 'the milestones' },
  hooks: { path: '/hooks', query: { per_page: '100' }, what: 'the hooks' },
  issues: { path: '/issues', query: { state: 'all', sort: 'created', direction: 'desc', per_page: '100' }, what: 'the issues' },
};

/** The first read: the repository itself, at the root's own URL. */
export function start(info: RootInfo): RootRead[] {
  const root = parseRoot(info.url);
  return [{ path: root.url, data: { step: 'repo' } }];
}

export function read(read: RootRead, answer: RootAnswer, ctx: TwinContext, info: RootInfo): RootRead[] {
  const root = parseRoot(info.url);
  const data = isObj(read.data) ? read.data : {};
  if (data['step'] === 'repo') return readRepo(answer, ctx, root);
  const listData = listDataOf(data);
  if (listData !== undefined) return readList(listData, answer, ctx, root);
  const files = filesData(data);
  if (files === undefined) throw rootError(`a read came back with data this twin did not give it: ${JSON.stringify(read.data).slice(0, 200)}`);
  switch (files.step) {
    case 'refs': return readRefs(files, answer, ctx, root);
    case 'commit': return readCommit(files, answer, ctx);
    case 'tree': return readTree(files, answer, ctx);
    case 'blob': return readBlob(files, answer, ctx);
    case 'keep': return readKeep(files, ctx);
  }
}

function readRepo(answer: RootAnswer, ctx: TwinContext, root: RepoRoot): RootRead[] {
  const what = `the repository ${root.owner}/${root.repo}`;
  if (!succeeded(answer)) throw answerFailed(answer, what);
  const repo = copyRepo(ctx, jsonOf(answer, what), what);
  // The root's own name leads to the repository even after a rename or a transfer, as GitHub redirects it.
  ctx.tree.put('repo_name', `${root.owner.toLowerCase()}/${root.repo.toLowerCase()}`, { id: repo.id });
  const lists = (Object.keys(LISTS) as ListStep[]).map((step): RootRead => ({
    path: LISTS[step].path,
    query: LISTS[step].query,
    data: { step, repoId: repo.id, page: 1, maxId: 0, maxNumber: 0 } satisfies ListData,
  }));
  return [...lists, ...refReads(repo.id, repo.default_branch)];
}

function listDataOf(d: Obj): ListData | undefined {
  const step = d['step'];
  if (step !== 'labels' && step !== 'milestones' && step !== 'hooks' && step !== 'issues') return undefined;
  const whole = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  return whole(d['repoId']) && whole(d['page']) && whole(d['maxId']) && whole(d['maxNumber']) ? (d as unknown as ListData) : undefined;
}

/** One page of a list: its items written, the next page asked for, or (on the last) the list's counters raised. */
function readList(data: ListData, answer: RootAnswer, ctx: TwinContext, root: RepoRoot): RootRead[] {
  const { what } = LISTS[data.step];
  if (!succeeded(answer)) {
    // Hooks need admin rights (403/404 without), and a repository with issues turned off answers
    // 410: the copy then holds none, rather than failing the whole refresh.
    const tolerated = (data.step === 'hooks' && (answer.status === 403 || answer.status === 404)) || (data.step === 'issues' && answer.status === 410);
    if (!tolerated) throw answerFailed(answer, what);
    finishList(data, ctx);
    return [];
  }
  const items = list(jsonOf(answer, what), what);
  let { maxId, maxNumber } = data;
  for (const [n, raw] of items.entries()) {
    const at = `${what} (page ${data.page})[${n}]`;
    const item = obj(raw, at);
    maxId = Math.max(maxId, num(item, 'id', at));
    if (data.step === 'labels') copyLabel(ctx, data.repoId, item, at);
    else if (data.step === 'milestones') maxNumber = Math.max(maxNumber, copyMilestone(ctx, data.repoId, item, at).number);
    else if (data.step === 'hooks') copyHook(ctx, data.repoId, item, at);
    else {
      // Pull requests are skipped (copyIssue), but their numbers are the issues' too.
      maxNumber = Math.max(maxNumber, num(item, 'number', at));
      copyIssue(ctx, data.repoId, item, at);
    }
  }
  const next = nextPage(answer, root, what);
  const after: ListData = { ...data, page: data.page + 1, maxId, maxNumber };
  if (next !== undefined && data.page < MAX_PAGES[data.step]) return [{ path: next, data: after }];
  finishList(after, ctx);
  return [];
}

function finishList(data: ListData, ctx: TwinContext): void {
  if (data.step === 'labels') raiseCounter(ctx, 'label', data.maxId + 1);
  else if (data.step === 'hooks') raiseCounter(ctx, 'hook', data.maxId + 1);
  else if (data.step === 'milestones') {
    raiseCounter(ctx, 'milestone', data.maxId + 1);
    raiseCounter(ctx, `milestone:${data.repoId}`, data.maxNumber + 1);
  } else {
    raiseCounter(ctx, 'issue', data.maxId + 1);
    raiseCounter(ctx, `number:${data.repoId}`, data.maxNumber + 1);
  }
}
