/**
 * A signing secret a twin keeps is hidden from the read token wherever the world shows
 * records (log, timeline, diff, checkpoint), over a served world as a viewer would read it;
 * the world's token still sees the records as kept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveWorld, TOKENS } from '../attach/harness.js';
import type { ServedWorld } from '../attach/harness.js';

describe('secrets and the read token', () => {
  let served: ServedWorld;
  let api: string;
  let whsec: string;
  const hookSecret = 'gh-hook-secret-0123456789';

  const read = async (path: string, token: string): Promise<string> => {
    const res = await fetch(`${api}${path}`, { headers: { 'x-kit-token': token } });
    expect([path, res.status]).toEqual([path, 200]);
    return res.text();
  };

  beforeAll(async () => {
    served = await serveWorld(['stripe', 'github']);
    api = served.server.worldApi;
    const stripe = `${served.server.worldUrl}/stripe`;
    const form = { authorization: `Bearer ${TOKENS.token}`, 'content-type': 'application/x-www-form-urlencoded' };
    const endpoint = await fetch(`${stripe}/v1/webhook_endpoints`, { method: 'POST', headers: form, body: 'url=https%3A%2F%2Fapp.example%2Fhooks&enabled_events[]=*' });
    whsec = ((await endpoint.json()) as { secret: string }).secret;
    expect(whsec).toMatch(/^whsec_/);
    // A customer: its event asks for a delivery signed with the endpoint's secret.
    expect((await fetch(`${stripe}/v1/customers`, { method: 'POST', headers: form, body: 'email=a%40example.com' })).status).toBe(200);
    const gh = { authorization: `token ${TOKENS.token}`, 'content-type': 'application/json' };
    const github = `${served.server.worldUrl}/github`;
    const login = ((await (await fetch(`${github}/user`, { headers: gh })).json()) as { login: string }).login;
    expect((await fetch(`${github}/user/repos`, { method: 'POST', headers: gh, body: JSON.stringify({ name: 'app' }) })).status).toBe(201);
    const hook = await fetch(`${github}/repos/${login}/app/hooks`, { method: 'POST', headers: gh, body: JSON.stringify({ config: { url: 'https://app.example/gh', secret: hookSecret } }) });
    expect(hook.status).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await served?.close();
  });

  it('hides them from the read token in the log, the timeline, the diff and the checkpoint', async () => {
    for (const path of ['/log/stripe', '/log/github', '/timeline?limit=100', '/diff', '/checkpoint/stripe', '/checkpoint/github']) {
      const seen = await read(path, TOKENS.readToken);
      expect([path, seen.includes(whsec), seen.includes(hookSecret)]).toEqual([path, false, false]);
    }
    // What is hidden reads as such, and the rest of the record is there.
    const checkpoint = JSON.parse(await read('/checkpoint/github', TOKENS.readToken)) as { records: { hook: Record<string, { config: { secret: string; url: string } }> } };
    const hook = Object.values(checkpoint.records.hook)[0];
    expect(hook?.config).toMatchObject({ secret: '[redacted]', url: 'https://app.example/gh' });
    const stripe = JSON.parse(await read('/checkpoint/stripe', TOKENS.readToken)) as { records: Record<string, Record<string, unknown>> };
    expect(Object.values(stripe.records['webhook_secret'] ?? {})).toEqual(['[redacted]']);
    const log = JSON.parse(await read('/log/stripe', TOKENS.readToken)) as { entries: { events?: { type: string; data: { sign?: { secret: string } } }[] }[] };
    const signs = log.entries.flatMap((e) => e.events ?? []).filter((e) => e.type === 'webhook.delivery').map((e) => e.data.sign?.secret);
    expect(signs.length).toBeGreaterThan(0);
    expect(new Set(signs)).toEqual(new Set(['[redacted]']));
  });

  it('shows them to the world token, which may write', async () => {
    for (const path of ['/log/stripe', '/checkpoint/stripe']) expect((await read(path, TOKENS.token)).includes(whsec)).toBe(true);
    for (const path of ['/log/github', '/checkpoint/github']) expect((await read(path, TOKENS.token)).includes(hookSecret)).toBe(true);
  });
});
