/**
 * A/B of one request kind through a built tree's whole engine, in-process on LMDB, for
 * comparing two trees (this one and a git worktree of another commit) run one after the
 * other: the built-in Stripe twin, 25 customers made first, then 12 batches of GET customer
 * (2 000), list of ten (2 000) or POST customer (640, 32 in flight); prints the fastest and the
 * median batch in µs per request. The fastest batch is the least disturbed by other work on a
 * shared machine.
 *
 *   node dist/bench/runner/ab.js <tree root> get|list|post
 *   # e.g. git worktree add /tmp/base HEAD~1 && (cd /tmp/base && ln -s $PWD/node_modules && npx tsc -p tsconfig.json)
 *   #      for i in 1 2; do node dist/bench/runner/ab.js /tmp/base get; node dist/bench/runner/ab.js . get; done
 */
import { resolve } from 'node:path';
import { stripeRequest } from './requests.js';
import { openTreeStripeRunner } from './tree.js';

const root = resolve(process.argv[2] ?? '.');
const mode = process.argv[3] ?? 'get';
if (!['get', 'list', 'post'].includes(mode)) throw new Error('mode: get, list or post');

const tree = await openTreeStripeRunner(root, 'ab');
const { runner } = tree;
let id = '';
for (let i = 0; i < 25; i++) {
  const made = await runner.handle(stripeRequest('POST', '/stripe/v1/customers', `email=a${i}%40example.com&name=Ada`));
  if (made.status !== 200) throw new Error(`create answered ${made.status}`);
  id ||= (JSON.parse(String(made.body)) as { id: string }).id;
}

async function batch(): Promise<number> {
  const n = mode === 'post' ? 640 : 2000;
  const start = process.hrtime.bigint();
  if (mode === 'get') for (let i = 0; i < n; i++) await runner.handle(stripeRequest('GET', `/stripe/v1/customers/${id}`));
  else if (mode === 'list') for (let i = 0; i < n; i++) await runner.handle(stripeRequest('GET', '/stripe/v1/customers', undefined, 'limit=10'));
  else for (let i = 0; i < n; i += 32) await Promise.all(Array.from({ length: 32 }, () => runner.handle(stripeRequest('POST', '/stripe/v1/customers', 'email=grace%40example.com&name=Grace'))));
  return Number(process.hrtime.bigint() - start) / 1e3 / n;
}

const times: number[] = [];
for (let i = 0; i < 12; i++) times.push(await batch());
times.sort((a, b) => a - b);
console.log(`${root} ${mode}: fastest ${times[0]!.toFixed(1)} µs, median ${times[6]!.toFixed(1)} µs per request`);
await tree.close();
