/**
 * Webhooks through @octokit/rest: hooks are records, creating one sends a `ping`, and issues,
 * issue_comment, pull_request and push deliveries are recorded — on the log as
 * `webhook.delivery` events and through the deliveries API — with the exact body, signed with
 * `X-Hub-Signature-256`, for a host-side deliverer to send.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGithubTwin, type GithubTwin } from './harness.js';
import { b64, failure } from './helpers.js';

interface Delivery { delivery_id: number; guid: string; hook_id: number; event: string; action: string | null; url: string; headers: Record<string, string>; body: string }

describe('GitHub twin: webhooks', () => {
  let gh: GithubTwin;
  let maint: string;
  let hookId = 0;
  const r = { owner: 'maint', repo: 'hooked' };
  const SECRET = 'It is a secret to everybody';

  const deliveries = async (): Promise<Delivery[]> => (await gh.events()).filter((e) => e.type === 'webhook.delivery').map((e) => e.data as Delivery);
  const verify = (d: Delivery): void => {
    expect(d.headers['x-hub-signature-256']).toBe('sha256=' + createHmac('sha256', SECRET).update(d.body).digest('hex'));
    expect(d.headers['x-github-event']).toBe(d.event);
    expect(d.headers['x-github-delivery']).toBe(d.guid);
    expect(d.guid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  };

  beforeAll(async () => {
    gh = await startGithubTwin();
    maint = await gh.user('maint');
    await gh.as(maint).repos.createForAuthenticatedUser({ name: 'hooked', auto_init: true });
  });
  afterAll(async () => { await gh?.close(); });

  it('creating a hook sends a signed ping; the secret is never shown', async () => {
    const hook = await gh.as(maint).repos.createWebhook({ ...r, config: { url: 'https://example.test/hook', content_type: 'json', secret: SECRET }, events: ['issues', 'issue_comment', 'pull_request', 'push'] });
    expect(hook.status).toBe(201);
    hookId = hook.data.id;
    expect(hook.data.config).toMatchObject({ url: 'https://example.test/hook', content_type: 'json', secret: '********' });
    const all = await deliveries();
    expect(all).toHaveLength(1);
    const ping = all[0] as Delivery;
    expect(ping).toMatchObject({ event: 'ping', hook_id: hookId, url: 'https://example.test/hook' });
    verify(ping);
    const payload = JSON.parse(ping.body) as { hook_id: number; zen: string; repository: { full_name: string }; sender: { login: string } };
    expect(payload).toMatchObject({ hook_id: hookId, repository: { full_name: 'maint/hooked' }, sender: { login: 'maint' } });
    expect(ping.body).not.toContain(SECRET);
  });

  it('issues, comments, pushes and pull requests each make one signed delivery with the right action', async () => {
    const before = (await deliveries()).length;
    const issue = await gh.as(maint).issues.create({ ...r, title: 'Hook me' }, );
    await gh.as(maint).issues.createComment({ ...r, issue_number: issue.data.number, body: 'a comment' });
    await gh.as(maint).issues.update({ ...r, issue_number: issue.data.number, state: 'closed' });
    const main = (await gh.as(maint).repos.getBranch({ ...r, branch: 'main' })).data.commit.sha;
    await gh.as(maint).git.createRef({ ...r, ref: 'refs/heads/topic', sha: main });
    const put = await gh.as(maint).repos.createOrUpdateFileContents({ ...r, path: 'f.txt', branch: 'topic', message: 'add f', content: b64('f\n') });
    await gh.as(maint).pulls.create({ ...r, title: 'Topic', head: 'topic', base: 'main' });
    const made = (await deliveries()).slice(before);
    expect(made.map((d) => `${d.event}.${d.action ?? ''}`)).toEqual([
      'issues.opened', 'issue_comment.created', 'issues.closed', 'push.', 'push.', 'pull_request.opened',
    ]);
    for (const d of made) verify(d);
    const push = JSON.parse((made[4] as Delivery).body) as { ref: string; before: string; after: string; commits: { id: string; message: string }[]; pusher: { name: string } };
    expect(push).toMatchObject({ ref: 'refs/heads/topic', before: main, after: put.data.commit.sha, pusher: { name: 'maint' } });
    expect(push.commits.map((c) => c.message)).toEqual(['add f']);
    const created = JSON.parse((made[3] as Delivery).body) as { created: boolean; before: string };
    expect(created).toMatchObject({ created: true, before: '0'.repeat(40) });
    const pr = JSON.parse((made[5] as Delivery).body) as { number: number; pull_request: { head: { ref: string } } };
    expect(pr.pull_request.head.ref).toBe('topic');
  });

  it('a hook only gets the events it listens for; an inactive hook gets none', async () => {
    const pushOnly = await gh.as(maint).repos.createWebhook({ ...r, config: { url: 'https://example.test/push-only', content_type: 'form' }, events: ['push'] });
    await gh.as(maint).repos.updateWebhook({ ...r, hook_id: pushOnly.data.id, active: false });
    const before = (await deliveries()).length;
    await gh.as(maint).issues.create({ ...r, title: 'Only the first hook hears this' });
    const made = (await deliveries()).slice(before);
    expect(made.map((d) => d.url)).toEqual(['https://example.test/hook']);
    await gh.as(maint).repos.updateWebhook({ ...r, hook_id: pushOnly.data.id, active: true });
    const b2 = (await deliveries()).length;
    await gh.as(maint).repos.createOrUpdateFileContents({ ...r, path: 'g.txt', message: 'g', content: b64('g\n') });
    const pushes = (await deliveries()).slice(b2);
    expect(pushes.map((d) => d.url).sort()).toEqual(['https://example.test/hook', 'https://example.test/push-only']);
    const form = pushes.find((d) => d.url.endsWith('push-only')) as Delivery;
    expect(form.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(form.body.startsWith('payload=')).toBe(true);
    expect(form.headers['x-hub-signature-256']).toBeUndefined();
  });

  it('deliveries are listed newest first, readable in full, and can be redelivered; ping and delete work', async () => {
    const list = await gh.as(maint).repos.listWebhookDeliveries({ ...r, hook_id: hookId });
    expect(list.data[list.data.length - 1]?.event).toBe('ping');
    const newest = list.data[0];
    const full = await gh.as(maint).repos.getWebhookDelivery({ ...r, hook_id: hookId, delivery_id: newest?.id as number });
    expect(full.data.request.headers?.['x-github-event']).toBe(newest?.event);
    const before = (await deliveries()).length;
    expect((await gh.as(maint).repos.redeliverWebhookDelivery({ ...r, hook_id: hookId, delivery_id: newest?.id as number })).status).toBe(202);
    expect((await gh.as(maint).repos.pingWebhook({ ...r, hook_id: hookId })).status).toBe(204);
    const made = (await deliveries()).slice(before);
    expect(made.map((d) => d.event)).toEqual([newest?.event, 'ping']);
    expect(made[0]?.guid).not.toBe(newest?.guid);
    await gh.as(maint).repos.deleteWebhook({ ...r, hook_id: hookId });
    expect((await failure(gh.as(maint).repos.getWebhook({ ...r, hook_id: hookId }))).status).toBe(404);
  });

  it('bad hook config is a 422; someone without admin rights cannot see hooks', async () => {
    expect((await failure(gh.as(maint).repos.createWebhook({ ...r, config: { url: 'not a url' } }))).status).toBe(422);
    expect((await failure(gh.as(maint).repos.createWebhook({ ...r, config: { url: 'https://x.test' }, events: ['nonsense'] }))).status).toBe(422);
    const other = await gh.user('other');
    expect((await failure(gh.as(other).repos.listWebhooks({ ...r }))).status).toBe(403);
  });

  it('an event takes at most 20 hooks on a repository, as GitHub allows: one more is 422, on create and on update', async () => {
    await gh.as(maint).repos.createForAuthenticatedUser({ name: 'crowded' });
    const c = { owner: 'maint', repo: 'crowded' };
    for (let i = 0; i < 20; i++) await gh.as(maint).repos.createWebhook({ ...c, config: { url: `https://example.test/h${i}` }, events: ['push'] });
    const refused = await failure(gh.as(maint).repos.createWebhook({ ...c, config: { url: 'https://example.test/h20' }, events: ['issues', 'push'] }));
    expect(refused.status).toBe(422);
    expect(refused.response?.data).toMatchObject({ message: 'Validation Failed', errors: [{ resource: 'Hook', code: 'custom', message: 'The "push" event cannot have more than 20 hooks' }] });
    const issues = await gh.as(maint).repos.createWebhook({ ...c, config: { url: 'https://example.test/issues' }, events: ['issues'] });
    const moved = await failure(gh.as(maint).repos.updateWebhook({ ...c, hook_id: issues.data.id, add_events: ['push'] }));
    expect(moved.status).toBe(422);
    expect((await gh.as(maint).repos.getWebhook({ ...c, hook_id: issues.data.id })).data.events).toEqual(['issues']);
    expect((await gh.as(maint).repos.listWebhooks({ ...c, per_page: 100 })).data).toHaveLength(21);
  });

  it('a delivery carries the caller\'s traceparent on', async () => {
    await gh.as(maint).repos.createWebhook({ ...r, config: { url: 'https://example.test/traced', content_type: 'json' }, events: ['issues'] });
    const before = (await deliveries()).length;
    const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await gh.as(maint).issues.create({ ...r, title: 'traced', headers: { traceparent: tp } });
    const made = (await deliveries()).slice(before);
    expect(made.find((d) => d.url.endsWith('traced'))?.headers['traceparent']).toBe(tp);
  });

  it('a deliverer records the receiver\'s answer (twin-only path, world token only); the deliveries API shows it', async () => {
    const hook = await gh.as(maint).repos.createWebhook({ ...r, config: { url: 'https://example.test/answered', content_type: 'json' }, events: ['push'] });
    const ping = (await deliveries()).filter((d) => d.hook_id === hook.data.id)[0] as Delivery;
    const repoId = (await gh.as(maint).repos.get({ ...r })).data.id;
    const path = '/_twin/repositories/{repository_id}/hooks/{hook_id}/deliveries/{delivery_id}';
    const params = { repository_id: repoId, hook_id: hook.data.id, delivery_id: ping.delivery_id };
    expect((await failure(gh.as(maint).request(`PUT ${path}`, { ...params, status_code: 200 }))).status).toBe(404);
    expect((await failure(gh.admin.request(`PUT ${path}`, { ...params, status_code: 'ok' }))).status).toBe(422);
    await gh.admin.request(`PUT ${path}`, { ...params, status_code: 200, duration: 0.12 });
    const listed = await gh.as(maint).repos.listWebhookDeliveries({ ...r, hook_id: hook.data.id });
    expect(listed.data[0]).toMatchObject({ status: 'OK', status_code: 200 });
    const got = await gh.as(maint).repos.getWebhook({ ...r, hook_id: hook.data.id });
    expect(got.data.last_response).toMatchObject({ code: 200, status: 'active', message: 'OK' });
  });

  it('the world sends each delivery once its entry is durable: the exact body, a signature that verifies, results recorded', async () => {
    const hook = await gh.as(maint).repos.createWebhook({ ...r, config: { url: 'https://receiver.test/sent', content_type: 'json', secret: SECRET }, events: ['issues'] });
    gh.respond = (url) => (url === 'https://receiver.test/sent' ? 200 : 503);
    const tp = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const issue = await gh.as(maint).issues.create({ ...r, title: 'Sent for real', headers: { traceparent: tp } });
    await gh.until(() => gh.received.some((x) => x.url === 'https://receiver.test/sent' && x.body.includes('Sent for real')));
    const sent = gh.received.find((x) => x.url === 'https://receiver.test/sent' && x.body.includes('Sent for real')) as { headers: Record<string, string>; body: string };
    expect(sent.headers['x-github-event']).toBe('issues');
    expect(sent.headers['x-hub-signature-256']).toBe('sha256=' + createHmac('sha256', SECRET).update(sent.body).digest('hex'));
    expect(JSON.parse(sent.body)).toMatchObject({ action: 'opened', issue: { number: issue.data.number, title: 'Sent for real' } });
    // The trace goes on: same trace id, a new span.
    expect(sent.headers['traceparent']?.split('-')[1]).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    const logged = (await deliveries()).find((d) => d.hook_id === hook.data.id && d.event === 'issues') as Delivery;
    expect(sent.headers['x-github-delivery']).toBe(logged.guid);
    // The attempt's outcome comes back through the twin's webhook.result move.
    let shown: { status: string; status_code: number }[] = [];
    for (let i = 0; i < 200 && !shown.some((d) => d.status === 'OK'); i++) {
      shown = (await gh.as(maint).repos.listWebhookDeliveries({ ...r, hook_id: hook.data.id })).data;
      if (!shown.some((d) => d.status === 'OK')) await new Promise((res) => setTimeout(res, 20));
    }
    expect(shown.find((d) => d.status_code === 200)?.status).toBe('OK');
  });
});
