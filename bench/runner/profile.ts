/**
 * Stripe customers in-process, for profiling (`node --cpu-prof dist/bench/runner/profile.js …`):
 * prints wall and CPU µs per request. `get N` retrieves one customer N times, `post N`
 * creates N (32 in flight; `post-idem N` with an Idempotency-Key each, as the SDK sends), `list N` lists 10 of 25 customers N times (GET /v1/customers?limit=10).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openLmdbStorage } from '../../runtime/store/index.js';
import { openWorldRunner } from '../../runtime/runner/index.js';
import type { WorldRequest } from '../../runtime/runner/types.js';
import { buildTwin } from '../../sdk/twin/build.js';
import { stripeRequest } from './requests.js';
const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..');
const stripe = await buildTwin(join(root, 'twins', 'stripe', 'twin', 'index.ts'));
const storage = openLmdbStorage(mkdtempSync(join(tmpdir(), 'prof-')));
const runner = await openWorldRunner({ storage, world: 'w', twins: [{ ...stripe, trusted: process.env.ENGINE !== 'quickjs' }] });
const c = await runner.handle(stripeRequest('POST', '/stripe/v1/customers', 'email=a%40b.com&name=Ada'));
const id = JSON.parse(String(c.body)).id;
const mode = process.argv[2] ?? 'get';
const N = Number(process.argv[3] ?? 5000);
if (mode === 'list') for (let i = 1; i < 25; i++) await runner.handle(stripeRequest('POST', '/stripe/v1/customers', `email=c${i}%40b.com&name=Customer+${i}`));
const t0 = process.hrtime.bigint(); const u0 = process.cpuUsage();
if (mode === 'list') {
  let body = '';
  for (let i = 0; i < N; i++) body = String((await runner.handle(stripeRequest('GET', '/stripe/v1/customers', undefined, 'limit=10'))).body);
  const page = JSON.parse(body) as { data: unknown[]; has_more: boolean };
  if (page.data.length !== 10 || !page.has_more) throw new Error(`list answered ${page.data.length} customers, has_more ${page.has_more}`);
}
else if (mode === 'get') { for (let i = 0; i < N; i++) await runner.handle(stripeRequest('GET', `/stripe/v1/customers/${id}`)); }
else {
  // `post-idem`: each create with its own Idempotency-Key, as the official SDK sends on every POST.
  let key = 0;
  const post = (): WorldRequest => {
    const r = stripeRequest('POST', '/stripe/v1/customers', 'email=a%40b.com&name=Grace');
    if (mode === 'post-idem') r.headers['idempotency-key'] = `bench-${key++}`;
    return r;
  };
  for (let i = 0; i < N; i += 32) await Promise.all(Array.from({ length: 32 }, () => runner.handle(post())));
}
const u = process.cpuUsage(u0); const t = Number(process.hrtime.bigint() - t0) / 1e3;
console.log(mode, "wall µs/req", (t / N).toFixed(1), "cpu µs/req", ((u.user + u.system) / N).toFixed(1), "(user", (u.user / N).toFixed(1), "system", (u.system / N).toFixed(1) + ")");
process.exit(0);
