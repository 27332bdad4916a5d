/**
 * A/B of one request kind through a built tree's whole engine, in-process on LMDB, for
 * comparing two trees (this one and a git worktree of another commit) run one after the
 * other: the built-in Stripe twin, 25 customers made first, then 12 batches of GET customer
 * (2 000), list of ten (2 000), POST customer (640, 32 in flight) or a PaymentIntent created
 * and confirmed with a card, without or with two metadata keys (640, 32 in flight); prints the
 * fastest and the median batch in µs per request, of wall time and of the process's CPU
 * (user and system). The fastest batch is the least disturbed by other work on a shared
 * machine.
 *
 *   node dist/bench/runner/ab.js <tree root> get|list|post|intent|intent-metadata
 *   # e.g. git worktree add /tmp/base HEAD~1 && (cd /tmp/base && ln -s $PWD/node_modules && npx tsc -p tsconfig.json)
 *   #      for i in 1 2; do node dist/bench/runner/ab.js /tmp/base get; node dist/bench/runner/ab.js . get; done
 */
import { resolve } from 'node:path';
import { stripeRequest } from './requests.js';
import { openTreeStripeRunner } from './tree.js';

const root = resolve(process.argv[2] ?? '.');
const mode = process.argv[3] ?? 'get';
const INTENT = 'amount=2000&currency=usd&payment_method=pm_card_visa&confirm=true&automatic_payment_methods[enabled]=true&automatic_payment_methods[allow_redirects]=never';
/** The body each write mode sends, 32 in flight. */
const WRITES: Record<string, [string, string]> = {
  post: ['/stripe/v1/customers', 'email=grace%40example.com&name=Grace'],
  intent: ['/stripe/v1/payment_intents', INTENT],
  'intent-metadata': ['/stripe/v1/payment_intents', `${INTENT}&metadata[order_id]=ord_123&metadata[user]=u_9`],
};
if (!['get', 'list'].includes(mode) && WRITES[mode] === undefined) throw new Error('mode: get, list, post, intent or intent-metadata');

const tree = await openTreeStripeRunner(root, 'ab');
const { runner } = tree;
let id = '';
for (let i = 0; i < 25; i++) {
  const made = await runner.handle(stripeRequest('POST', '/stripe/v1/customers', `email=a${i}%40example.com&name=Ada`));
  if (made.status !== 200) throw new Error(`create answered ${made.status}`);
  id ||= (JSON.parse(String(made.body)) as { id: string }).id;
}

async function write(path: string, form: string): Promise<void> {
  const r = await runner.handle(stripeRequest('POST', path, form));
  if (r.status !== 200) throw new Error(`${path} answered ${r.status}: ${String(r.body).slice(0, 300)}`);
}

/** One batch: wall and CPU µs per request. */
async function batch(): Promise<[number, number]> {
  const written = WRITES[mode];
  const n = written !== undefined ? 640 : 2000;
  const start = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  if (mode === 'get') for (let i = 0; i < n; i++) await runner.handle(stripeRequest('GET', `/stripe/v1/customers/${id}`));
  else if (mode === 'list') for (let i = 0; i < n; i++) await runner.handle(stripeRequest('GET', '/stripe/v1/customers', undefined, 'limit=10'));
  else if (written !== undefined) for (let i = 0; i < n; i += 32) await Promise.all(Array.from({ length: 32 }, () => write(...written)));
  const used = process.cpuUsage(cpu);
  return [Number(process.hrtime.bigint() - start) / 1e3 / n, (used.user + used.system) / n];
}

const wall: number[] = [];
const cpu: number[] = [];
for (let i = 0; i < 12; i++) {
  const [w, c] = await batch();
  wall.push(w);
  cpu.push(c);
}
const line = (xs: number[]): string => {
  xs.sort((a, b) => a - b);
  return `fastest ${xs[0]!.toFixed(1)} µs, median ${xs[6]!.toFixed(1)} µs`;
};
console.log(`${root} ${mode}: wall ${line(wall)}; CPU ${line(cpu)} per request`);
await tree.close();
