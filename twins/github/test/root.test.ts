/**
 * The GitHub twin's root (twin/root/): a copy of one real repository. The "real"
 * GitHub is a second GitHub twin, seeded through its API with a repository in an organization,
 * 130 issues (two pages), labels, milestones, a hook, files, a second branch with a pull request
 * and a tag. A refresh's reads are answered by its API (`vendorOver`); Octokit then reads the copy
 * and the real one alike and compares. No markers or sweep here: that is the world runner's; a
 * test checks instead that a refresh writes again everything the real repository still shows.
 */
import type { Octokit } from '@octokit/rest';
import { beforeAll, describe, expect, it } from 'vitest';
import { createGuestHarness, type GuestHarness } from '../../../sdk/twin/testing.js';
import { githubBundle } from './harness.js';
import { b64, failure } from './helpers.js';
import { seededRandom } from '../../../test/helpers/random.js';
import { gitId, octokitOver, rawCommit, rawTree, vendorOver, without, type VendorAnswer } from './root.test-helper.js';

const REAL = 'http://127.0.0.1:4440/acme/real/github';
const ROOT = { url: `${REAL}/repos/acme/shop` };
const repo = { owner: 'acme', repo: 'shop' };
const NOW = Date.parse('2026-03-01T00:00:00.000Z');

let source: string;
let real: GuestHarness;
let realKit: Octokit;
/** Paths of the files on main, and the one past the copy's 1 MiB cap. */
const FILES = ['README.md', 'docs/guide.md', 'src/app.ts', 'src/lib/util.ts', 'assets/logo.bin'];
const HUGE = 'assets/huge.bin';

function newCopy(name: string): { copy: GuestHarness; kit: Octokit } {
  const copy = createGuestHarness(source, { world: name, now: NOW + 86_400_000 });
  return { copy, kit: octokitOver(copy, `http://127.0.0.1:4441/acme/${name}/github`) };
}

function refresh(copy: GuestHarness, tamper?: (read: Parameters<Parameters<GuestHarness['refresh']>[1]>[0], a: VendorAnswer) => VendorAnswer) {
  const vendor = vendorOver(real, REAL, ROOT.url, tamper);
  const from = copy.head;
  copy.refresh(ROOT, vendor.answer);
  return { reads: vendor.reads, entries: copy.log.slice(from) };
}

const issueView = (i: Record<string, unknown>) => without(i, 'author_association');

/** Every issue (not pull request), label, milestone and hook of a repository, as Octokit lists them. */
async function lists(kit: Octokit) {
  const issues = (await kit.paginate(kit.rest.issues.listForRepo, { ...repo, state: 'all', per_page: 100 })).filter((i) => i.pull_request === undefined);
  const labels = await kit.paginate(kit.rest.issues.listLabelsForRepo, { ...repo, per_page: 100 });
  const milestones = await kit.paginate(kit.rest.issues.listMilestones, { ...repo, state: 'all', per_page: 100 });
  const hooks = (await kit.rest.repos.listWebhooks(repo)).data;
  return {
    issues: issues.map((i) => issueView(i as unknown as Record<string, unknown>)),
    labels,
    milestones,
    // last_response is the copy's own deliveries (none: a copied hook is never delivered to).
    hooks: hooks.map((h) => without(h as unknown as Record<string, unknown>, 'last_response')),
  };
}

async function expectSameRepository(kit: Octokit): Promise<void> {
  expect((await kit.rest.repos.get(repo)).data).toEqual((await realKit.rest.repos.get(repo)).data);
  const [mine, theirs] = [await lists(kit), await lists(realKit)];
  expect(mine.issues).toEqual(theirs.issues);
  expect(mine.labels).toEqual(theirs.labels);
  expect(mine.milestones).toEqual(theirs.milestones);
  expect(mine.hooks).toEqual(theirs.hooks);
  for (const kind of ['heads', 'tags']) {
    expect((await kit.rest.git.listMatchingRefs({ ...repo, ref: kind })).data).toEqual((await realKit.rest.git.listMatchingRefs({ ...repo, ref: kind })).data);
  }
}

async function fileOf(kit: Octokit, path: string): Promise<unknown> {
  return (await kit.rest.repos.getContent({ ...repo, path })).data;
}

beforeAll(async () => {
  ({ source } = await githubBundle());
  real = createGuestHarness(source, { world: 'real', now: NOW });
  realKit = octokitOver(real, REAL);
  await realKit.request('POST /admin/users', { login: 'octocat', email: 'octocat@example.test' });
  await realKit.request('POST /admin/users', { login: 'hubot', email: 'hubot@example.test' });
  await realKit.request('POST /admin/organizations', { login: 'acme', admin: 'octocat' });
  const hubotToken = ((await realKit.request('POST /admin/users/{username}/authorizations', { username: 'hubot', scopes: ['repo'] })).data as { token: string }).token;
  const hubot = octokitOver(real, REAL, hubotToken);
  await realKit.rest.repos.createInOrg({ org: 'acme', name: 'shop', description: 'the real shop', auto_init: true });
  await realKit.rest.repos.replaceAllTopics({ ...repo, names: ['shop', 'demo'] });
  for (const [name, color, description] of [['bug', 'd73a4a', 'Something is broken'], ['feature', '0e8a16', null], ['docs', '0075ca', 'Words']] as const) {
    await realKit.rest.issues.createLabel({ ...repo, name, color, ...(description === null ? {} : { description }) });
  }
  await realKit.rest.issues.createMilestone({ ...repo, title: 'v1', due_on: '2026-06-01T00:00:00Z', description: 'first release' });
  await realKit.rest.issues.createMilestone({ ...repo, title: 'v0', state: 'closed' });
  await realKit.rest.repos.createWebhook({ ...repo, config: { url: 'https://hooks.example.test/shop', content_type: 'json', secret: 's3cret' }, events: ['issues', 'label', 'push'] });
  for (let n = 1; n <= 130; n++) {
    real.advance(60_000);
    const labels = n % 3 === 0 ? ['bug'] : n % 5 === 0 ? ['feature', 'docs'] : [];
    const fields = { ...repo, title: `Issue ${n}`, body: n % 2 === 0 ? `Body of ${n}, @octocat` : undefined, labels, milestone: n % 4 === 0 ? 1 : undefined, assignees: n % 7 === 0 ? ['octocat'] : [] };
    // Every third issue is opened by hubot, who may not set labels (GitHub drops them silently).
    const made = (n % 3 === 1 ? await hubot.rest.issues.create(fields) : await realKit.rest.issues.create(fields)).data;
    if (n % 6 === 0) await realKit.rest.issues.update({ ...repo, issue_number: made.number, state: 'closed', state_reason: 'not_planned' });
  }
  const put = async (path: string, content: string, branch?: string) =>
    realKit.rest.repos.createOrUpdateFileContents({ ...repo, path, message: `Add ${path}`, content, ...(branch === undefined ? {} : { branch }) });
  await put('docs/guide.md', b64('# Guide\n\nRead me.\n'));
  await put('src/app.ts', b64('export const app = 1;\n'));
  await put('src/lib/util.ts', b64('export const util = () => 2;\n'));
  const noise = seededRandom(34);
  await put('assets/logo.bin', Buffer.from(Array.from({ length: 3000 }, () => Math.floor(noise() * 256))).toString('base64'));
  await put(HUGE, Buffer.alloc(1024 * 1024 + 10, 7).toString('base64'));
  const main = (await realKit.rest.git.getRef({ ...repo, ref: 'heads/main' })).data.object.sha;
  await realKit.rest.git.createRef({ ...repo, ref: 'refs/heads/feature', sha: main });
  await put('feature.txt', b64('a feature\n'), 'feature');
  await realKit.rest.pulls.create({ ...repo, title: 'A feature', head: 'feature', base: 'main' });
  await realKit.rest.git.createRef({ ...repo, ref: 'refs/tags/v1.0', sha: main });
}, 120_000);

describe('a refresh of a real repository', () => {
  let copy: GuestHarness;
  let kit: Octokit;
  let reads: string[];

  beforeAll(() => {
    ({ copy, kit } = newCopy('copy-a'));
    ({ reads } = refresh(copy));
  }, 60_000);

  it('reads the repository, both pages of its issues, its lists, refs, commits, tree and files', () => {
    expect(reads[0]).toBe('/repos/acme/shop');
    expect(reads.filter((r) => r.startsWith('/repos/acme/shop/issues?'))).toHaveLength(2);
    expect(reads).toContain('/repos/acme/shop/labels?per_page=100');
    expect(reads).toContain('/repos/acme/shop/hooks?per_page=100');
    expect(reads.filter((r) => r.includes('/git/trees/') && r.endsWith('recursive=1'))).toHaveLength(1);
    // Every file of main except the one past the cap; each blob once.
    expect(reads.filter((r) => r.includes('/git/blobs/'))).toHaveLength(FILES.length);
  });

  it('answers Octokit with the real repository, issues, labels, milestones, hooks and refs', async () => {
    await expectSameRepository(kit);
    const issues = (await lists(kit)).issues;
    expect(issues).toHaveLength(130);
    // The real numbers and ids, past the first page.
    expect(issues.map((i) => i['number'])).toEqual(Array.from({ length: 130 }, (_, i) => 130 - i));
    const closed = (await kit.rest.issues.get({ ...repo, issue_number: 12 })).data;
    expect(closed).toMatchObject({ state: 'closed', state_reason: 'not_planned', labels: [{ name: 'bug' }], milestone: { title: 'v1' } });
    expect(closed).toEqual((await realKit.rest.issues.get({ ...repo, issue_number: 12 })).data);
    expect((await kit.rest.issues.get({ ...repo, issue_number: 7 })).data.user?.login).toBe('hubot');
  });

  it('leaves the pull request out, and reads as GitHub the files of the default branch', async () => {
    await expect(failure(kit.rest.issues.get({ ...repo, issue_number: 131 }))).resolves.toMatchObject({ status: 404 });
    for (const path of FILES) expect(await fileOf(kit, path), path).toEqual(await fileOf(realKit, path));
    expect(await fileOf(kit, 'src')).toEqual(await fileOf(realKit, 'src'));
    // Past the 1 MiB cap: listed in its folder (without its size), not readable.
    await expect(failure(fileOf(kit, HUGE))).resolves.toMatchObject({ status: 404 });
    const head = (await realKit.rest.git.getRef({ ...repo, ref: 'heads/main' })).data.object.sha;
    expect((await kit.rest.git.getCommit({ ...repo, commit_sha: head })).data).toEqual((await realKit.rest.git.getCommit({ ...repo, commit_sha: head })).data);
    const tree = (await kit.rest.git.getTree({ ...repo, tree_sha: 'main', recursive: '1' })).data;
    const realTree = (await realKit.rest.git.getTree({ ...repo, tree_sha: 'main', recursive: '1' })).data;
    expect(tree.tree.map((e) => (e.path === HUGE ? { ...e, size: 0 } : e))).toEqual(realTree.tree.map((e) => (e.path === HUGE ? { ...e, size: 0 } : e)));
    // The feature branch and the tag name their real commits; only main's files are copied.
    expect((await kit.rest.repos.getBranch({ ...repo, branch: 'feature' })).data.commit.sha).toBe((await realKit.rest.repos.getBranch({ ...repo, branch: 'feature' })).data.commit.sha);
    await expect(failure(kit.rest.repos.getContent({ ...repo, path: 'feature.txt', ref: 'feature' }))).resolves.toMatchObject({ status: 404 });
  });

  it('stores git objects that hash to their ids (trees rebuilt from the listing, blobs checked)', () => {
    const objects = copy.records('obj') as { id: string; value: { t: string; b64?: string; entries?: { mode: string; name: string; sha: string }[] } & Parameters<typeof rawCommit>[0] }[];
    const kinds = new Map<string, number>();
    for (const { id, value } of objects) {
      const sha = id.slice(id.indexOf(':') + 1);
      kinds.set(value.t, (kinds.get(value.t) ?? 0) + 1);
      const raw = value.t === 'blob' ? Buffer.from(value.b64 as string, 'base64') : value.t === 'tree' ? rawTree(value.entries ?? []) : rawCommit(value);
      // Commits the other twin made (UTC, unsigned) rebuild exactly too; GitHub's need not (README).
      expect(gitId(value.t, raw), `${value.t} ${sha}`).toBe(sha);
    }
    // main's root, docs, src, src/lib, assets; its files; main's and feature's commits.
    expect(Object.fromEntries(kinds)).toEqual({ tree: 5, blob: FILES.length, commit: 2 });
  });

  it('sends nothing: no entry of the refresh emits, and the copied hook has no deliveries', () => {
    expect(copy.log.every((e) => e.cause.kind === 'refresh' && e.events.length === 0)).toBe(true);
    expect(copy.records('delivery')).toEqual([]);
  });

  it('numbers what the world makes in the copy after the real ones', async () => {
    const issue = (await kit.rest.issues.create({ ...repo, title: 'Made in the copy', labels: ['bug', 'new'] })).data;
    // 130 issues and pull request #131 at the root.
    expect(issue.number).toBe(132);
    const realIds = (await lists(realKit));
    expect(issue.id).toBeGreaterThan(Math.max(...realIds.issues.map((i) => i['id'] as number)));
    const made = issue.labels.find((l) => typeof l !== 'string' && l.name === 'new');
    expect(typeof made === 'object' && made !== null ? made.id : 0).toBeGreaterThan(Math.max(...realIds.labels.map((l) => l.id)));
    expect((await kit.rest.issues.createMilestone({ ...repo, title: 'v2' })).data.number).toBe(3);
    // The world's own hook gets the copy's events; the copied one never does.
    const own = (await kit.rest.repos.createWebhook({ ...repo, config: { url: 'https://receiver.test/copy', content_type: 'json' }, events: ['issues'] })).data;
    expect(own.id).toBeGreaterThan(realIds.hooks[0]?.['id'] as number);
    await kit.rest.issues.update({ ...repo, issue_number: 5, title: 'Edited in the copy' });
    await kit.rest.repos.pingWebhook({ ...repo, hook_id: realIds.hooks[0]?.['id'] as number });
    // The ping of the own hook when it was made, and the edit.
    expect(copy.records('delivery').map((d) => (d.value as { hook_id: number; event: string }).hook_id)).toEqual([own.id, own.id]);
  });
});

/** Records written by the entries, as `type/id`. */
function written(entries: { writes: { type: string; id: string }[] }[]): Set<string> {
  return new Set(entries.flatMap((e) => e.writes.map((w) => `${w.type}/${w.id}`)));
}

describe('a second refresh', () => {
  it('brings the real changes, and writes again every record the real repository still shows', async () => {
    const { copy, kit } = newCopy('copy-b');
    const first = written(refresh(copy).entries);
    const oldApp = ((await realKit.rest.repos.getContent({ ...repo, path: 'src/app.ts' })).data as { sha: string }).sha;
    real.advance(3_600_000);
    await realKit.rest.issues.update({ ...repo, issue_number: 5, title: 'Renamed at the root', labels: ['docs'] });
    await realKit.rest.issues.update({ ...repo, issue_number: 8, state: 'closed' });
    await realKit.rest.issues.deleteLabel({ ...repo, name: 'feature' });
    await realKit.rest.issues.updateMilestone({ ...repo, milestone_number: 1, description: 'moved' });
    const fresh = (await realKit.rest.issues.create({ ...repo, title: 'New at the root' })).data;
    await realKit.rest.repos.createOrUpdateFileContents({ ...repo, path: 'src/app.ts', message: 'Change app', content: b64('export const app = 2;\n'), sha: oldApp });
    await realKit.rest.repos.createOrUpdateFileContents({ ...repo, path: 'docs/new.md', message: 'Add new', content: b64('new\n') });

    const again = refresh(copy);
    const second = written(again.entries);
    // Only the new files were read; the unchanged ones were written again from the copy.
    expect(again.reads.filter((r) => r.includes('/git/blobs/'))).toHaveLength(2);
    // The copy still holds the deleted label: sweeping it is the runner's (checked below).
    const labelsNow = (await lists(kit)).labels.filter((l) => l.name !== 'feature');
    expect(labelsNow).toEqual((await lists(realKit)).labels);
    expect((await kit.rest.repos.get(repo)).data).toEqual((await realKit.rest.repos.get(repo)).data);
    const [mine, theirs] = [await lists(kit), await lists(realKit)];
    expect(mine.issues).toEqual(theirs.issues);
    expect(mine.milestones).toEqual(theirs.milestones);
    expect((await kit.rest.git.listMatchingRefs({ ...repo, ref: 'heads' })).data).toEqual((await realKit.rest.git.listMatchingRefs({ ...repo, ref: 'heads' })).data);
    expect((await kit.rest.issues.get({ ...repo, issue_number: fresh.number })).data.title).toBe('New at the root');
    for (const path of ['src/app.ts', 'docs/new.md', 'docs/guide.md']) expect(await fileOf(kit, path)).toEqual(await fileOf(realKit, path));

    // What the second refresh did not write again is what the runner would sweep: exactly what
    // the real repository stopped showing (the deleted label, main's old commit, trees and app.ts).
    const gone = [...first].filter((k) => !second.has(k));
    expect(gone.filter((k) => !k.startsWith('obj/'))).toEqual([expect.stringMatching(/^label\/\d+:feature$/)]);
    const stillShown = new Set((await realKit.rest.git.getTree({ ...repo, tree_sha: 'main', recursive: '1' })).data.tree.map((e) => e.sha));
    const goneObjects = gone.filter((k) => k.startsWith('obj/')).map((k) => k.slice(k.indexOf(':') + 1));
    expect(goneObjects).toContain(oldApp);
    expect(goneObjects.filter((sha) => stillShown.has(sha))).toEqual([]);
    expect(second.has(`obj/${copy.records('repo')[0]?.id}:${((await fileOf(realKit, 'docs/guide.md')) as { sha: string }).sha}`)).toBe(true);
  });
});

describe('webhook ingest', () => {
  let copy: GuestHarness;
  let kit: Octokit;

  /** The real twin's deliveries to its hook since `after`, as GitHub would POST them to the ingest endpoint. */
  function deliveriesSince(after: number): { headers: Record<string, string>; body: string }[] {
    return real.records('delivery')
      .map((d) => d.value as { id: number; request: { headers: Record<string, string>; body: string } })
      .filter((d) => d.id > after)
      .sort((a, b) => a.id - b.id)
      .map((d) => ({ headers: d.request.headers, body: d.request.body }));
  }
  const lastDelivery = (): number => Math.max(0, ...real.records('delivery').map((d) => (d.value as { id: number }).id));

  beforeAll(() => {
    ({ copy, kit } = newCopy('copy-c'));
    refresh(copy);
  }, 60_000);

  it('folds issues, label and push events as the real repository sent them', async () => {
    const since = lastDelivery();
    real.advance(60_000);
    const made = (await realKit.rest.issues.create({ ...repo, title: 'Opened at the root', labels: ['bug'] })).data;
    await realKit.rest.issues.update({ ...repo, issue_number: made.number, title: 'Edited at the root', body: 'now with a body' });
    await realKit.rest.issues.addLabels({ ...repo, issue_number: made.number, labels: ['docs'] });
    await realKit.rest.issues.removeLabel({ ...repo, issue_number: made.number, name: 'bug' });
    await realKit.rest.issues.update({ ...repo, issue_number: made.number, state: 'closed' });
    await realKit.rest.issues.update({ ...repo, issue_number: made.number, state: 'open' });
    await realKit.rest.issues.update({ ...repo, issue_number: 3, state: 'closed' });
    await realKit.rest.issues.createLabel({ ...repo, name: 'triage', color: 'fbca04' });
    await realKit.rest.issues.updateLabel({ ...repo, name: 'triage', new_name: 'needs-triage' });
    await realKit.rest.issues.deleteLabel({ ...repo, name: 'docs' });
    const pushed = (await realKit.rest.repos.createOrUpdateFileContents({ ...repo, path: 'pushed.md', message: 'Pushed', content: b64('pushed\n') })).data;
    const webhooks = deliveriesSince(since);
    expect(webhooks.map((w) => `${w.headers['x-github-event']}`)).toEqual(['issues', 'issues', 'issues', 'issues', 'issues', 'issues', 'issues', 'label', 'label', 'label', 'push']);

    for (const w of webhooks) {
      const res = copy.ingest(ROOT, { headers: w.headers, body: w.body });
      expect(res.thrown, w.headers['x-github-event']).toBeUndefined();
      expect(res.events).toEqual([]);
    }
    const [mine, theirs] = [await lists(kit), await lists(realKit)];
    expect(mine.issues).toEqual(theirs.issues);
    expect(mine.labels).toEqual(theirs.labels);
    expect((await kit.rest.repos.get(repo)).data).toEqual((await realKit.rest.repos.get(repo)).data);
    // The ref moved to the pushed commit, stored whole (it hashes to its id).
    expect((await kit.rest.git.getRef({ ...repo, ref: 'heads/main' })).data.object.sha).toBe(pushed.commit.sha);
    const commit = copy.get('obj', `${copy.records('repo')[0]?.id}:${pushed.commit.sha}`) as Parameters<typeof rawCommit>[0] & { partial?: true };
    expect(commit.partial).toBeUndefined();
    expect(gitId('commit', rawCommit(commit))).toBe(pushed.commit.sha);
    expect((await kit.rest.git.getCommit({ ...repo, commit_sha: pushed.commit.sha as string })).data).toEqual((await realKit.rest.git.getCommit({ ...repo, commit_sha: pushed.commit.sha as string })).data);
    // A push carries no file contents: they come with the next refresh.
    await expect(failure(fileOf(kit, 'pushed.md'))).resolves.toMatchObject({ status: 404 });
    refresh(copy);
    expect(await fileOf(kit, 'pushed.md')).toEqual(await fileOf(realKit, 'pushed.md'));
    // A new issue in the copy comes after the one the webhook brought.
    expect((await kit.rest.issues.create({ ...repo, title: 'After the webhook' })).data.number).toBe(made.number + 1);
  });

  it('stores a pushed commit that does not rebuild to its id as partial, and the next refresh reads it whole', async () => {
    const since = lastDelivery();
    const pushed = (await realKit.rest.repos.createOrUpdateFileContents({ ...repo, path: 'again.md', message: 'Again', content: b64('again\n') })).data;
    const [push] = deliveriesSince(since);
    // As a signed commit would be: what the payload says does not hash to the id.
    const body = JSON.parse(push?.body as string) as { commits: { message: string }[]; head_commit: { message: string } };
    body.commits[0]!.message = body.head_commit.message = 'Again (as the payload says it)';
    copy.ingest(ROOT, { headers: push?.headers ?? {}, body });
    const key = `${copy.records('repo')[0]?.id}:${pushed.commit.sha}`;
    expect(copy.get('obj', key)).toMatchObject({ partial: true, message: 'Again (as the payload says it)' });
    expect((await kit.rest.git.getRef({ ...repo, ref: 'heads/main' })).data.object.sha).toBe(pushed.commit.sha);
    const { reads } = refresh(copy);
    expect(reads).toContain(`/repos/acme/shop/git/commits/${pushed.commit.sha}`);
    expect((copy.get('obj', key) as { partial?: true }).partial).toBeUndefined();
    expect((await kit.rest.git.getCommit({ ...repo, commit_sha: pushed.commit.sha as string })).data).toEqual((await realKit.rest.git.getCommit({ ...repo, commit_sha: pushed.commit.sha as string })).data);
  });

  it('folds milestone, repository and deleted-issue events (payloads as GitHub documents them)', async () => {
    const repository = (await realKit.rest.repos.update({ ...repo, description: 'renamed description', has_wiki: false })).data;
    const milestone = (await realKit.rest.issues.updateMilestone({ ...repo, milestone_number: 2, title: 'v0 (old)', state: 'open' })).data;
    const sender = { login: 'octocat', id: 2, type: 'User', site_admin: false };
    const send = (event: string, body: unknown) => copy.ingest(ROOT, { headers: { 'x-github-event': event, 'x-github-delivery': `d-${event}` }, body });
    send('repository', { action: 'edited', repository, sender, changes: { description: { from: 'the real shop' } } });
    send('milestone', { action: 'edited', milestone, repository, sender, changes: { title: { from: 'v0' } } });
    expect((await kit.rest.repos.get(repo)).data).toMatchObject({ description: 'renamed description', has_wiki: false, id: repository.id });
    expect((await kit.rest.issues.getMilestone({ ...repo, milestone_number: 2 })).data).toEqual(milestone);
    send('milestone', { action: 'deleted', milestone, repository, sender });
    await expect(failure(kit.rest.issues.getMilestone({ ...repo, milestone_number: 2 }))).resolves.toMatchObject({ status: 404 });
    const issue = (await realKit.rest.issues.get({ ...repo, issue_number: 10 })).data;
    send('issues', { action: 'deleted', issue, repository, sender });
    await expect(failure(kit.rest.issues.get({ ...repo, issue_number: 10 }))).resolves.toMatchObject({ status: 404 });
  });

  it('writes nothing for another event or another repository', () => {
    const before = copy.head;
    const repository = { id: 999_999, name: 'other', full_name: 'acme/other', owner: { login: 'acme', id: 3, type: 'Organization' }, created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z' };
    const issue = { id: 5, number: 1, title: 'elsewhere', state: 'open', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z', user: { login: 'octocat', id: 2 } };
    copy.ingest(ROOT, { headers: { 'x-github-event': 'star' }, body: { action: 'created', repository: copy.get('repo', String(copy.records('repo')[0]?.id)) } });
    copy.ingest(ROOT, { headers: { 'x-github-event': 'issues' }, body: { action: 'opened', issue, repository } });
    copy.ingest(ROOT, { headers: {}, body: { action: 'opened', issue, repository } });
    expect(copy.head).toBe(before);
  });
});

describe('what a refresh refuses', () => {
  it('a root that names no repository', () => {
    const { copy } = newCopy('copy-bad-root');
    for (const url of ['ftp://api.github.com/repos/a/b', 'https://api.github.com/users/octocat', 'https://api.github.com/repos/a/..', 'https://api.github.com/repos/a/b?x=1']) {
      expect(() => copy.refresh({ url }, () => ({ body: {} })), url).toThrow(/github root: the root .* (is not an http|does not end in \/repos)/);
    }
    expect(copy.log).toEqual([]);
  });

  it('a repository the credential cannot read, or a spent rate limit, fails the refresh with GitHub\'s words', () => {
    const { copy } = newCopy('copy-404');
    const notFound = () => ({ status: 404, headers: {}, body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' } });
    expect(() => refresh(copy, notFound)).toThrow('github root: the repository acme/shop answered 404: Not Found');
    const limited = () => ({ status: 403, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1772323200' }, body: { message: 'API rate limit exceeded' } });
    expect(() => refresh(copy, limited)).toThrow("the repository acme/shop answered 403: the credential's rate limit is spent until 2026-03-01T00:00:00.000Z");
    expect(copy.log).toEqual([]);
  });

  it('hooks the credential may not read: the rest is copied, no hook', async () => {
    const { copy, kit } = newCopy('copy-no-admin');
    refresh(copy, (read, a) => (read.path === '/hooks' ? { status: 404, headers: {}, body: { message: 'Not Found' } } : a));
    expect((await kit.rest.repos.listWebhooks(repo)).data).toEqual([]);
    expect((await lists(kit)).labels).toEqual((await lists(realKit)).labels);
  });

  it('a next page off the root\'s API, a blob that is not its id, a tree naming .git', () => {
    const tampered = (change: (read: { path: string }, a: VendorAnswer) => VendorAnswer | undefined) => (read: { path: string }, a: VendorAnswer) => change(read, a) ?? a;
    const cases: [string, (read: { path: string }, a: VendorAnswer) => VendorAnswer | undefined, RegExp][] = [
      ['link', (read, a) => (read.path === '/labels' ? { ...a, headers: { ...a.headers, link: '<https://evil.test/labels?page=2>; rel="next"' } } : undefined), /the labels links its next page outside the root's API/],
      ['blob', (read, a) => (read.path.includes('/git/blobs/') ? { ...a, body: { ...(a.body as object), content: b64('not this') } } : undefined), /the blob [0-9a-f]{40} answered content whose id is/],
      ['tree', (read, a) => {
        if (!read.path.includes('/git/trees/')) return undefined;
        const t = a.body as { tree: { path: string }[] };
        return { ...a, body: { ...t, tree: [...t.tree, { path: 'src/.git', mode: '040000', type: 'tree', sha: 'a'.repeat(40) }] } };
      }, /hasDotgit/],
    ];
    for (const [name, change, message] of cases) {
      const { copy } = newCopy(`copy-${name}`);
      expect(() => refresh(copy, tampered(change)), name).toThrow(message);
    }
  });
});
