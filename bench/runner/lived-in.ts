/**
 * Requests whose cost could grow with an account's history, in a Stripe account that has
 * made `n` of each object first: the balance (n charges), a payout (checks the available
 * balance), searches by a payment intent's metadata (n of them) and by a customer's email
 * (n / 10), a price found and claimed by lookup key (n prices, each with a key), an invoice
 * for a customer (n invoice items of other customers), deleting a customer with
 * subscriptions and finding a subscription item (n subscriptions of others), and finding and
 * making promotion codes by code (n codes), and polling for events since an instant (the
 * account's ~10 n events all older). Each as CPU µs per request (median of its
 * batches) and as a ratio to a baseline in the same world (reads: retrieving a customer;
 * writes: creating one); run at two sizes, a request that reads only what it needs keeps its
 * ratio as n grows. In-process, the built tree's engine:
 *
 *   node dist/bench/runner/lived-in.js <tree root> <n> [<n> …]
 *
 * `make bench` runs it on this tree at 200 and 2,000.
 */
import { resolve } from 'node:path';
import type { WorldRunner } from '../../runtime/runner/index.js';
import { writeBenchJson } from '../results/json.js';
import { apiRequest, stripeRequest } from './requests.js';
import { openTreeStripeRunner } from './tree.js';

const root = resolve(process.argv[2] ?? '.');
const sizes = process.argv.slice(3).map(Number);
if (sizes.length === 0 || sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error('usage: lived-in.js <tree root> <n> [<n> …]');

interface Answer { status: number; json: Record<string, unknown> }

/** Sets or advances the world clock (the world API's `PUT /clock`, `POST /clock/advance`). */
async function clock(runner: WorldRunner, method: 'PUT' | 'POST', path: string, body: unknown): Promise<void> {
  const r = await runner.handle(apiRequest(method, path, body));
  if (r.status !== 200) throw new Error(`${method} ${path} answered ${r.status}: ${String(r.body)}`);
}

async function call(runner: WorldRunner, method: string, path: string, form?: string, query = ''): Promise<Answer> {
  const r = await runner.handle(stripeRequest(method, `/stripe${path}`, form, query));
  const json = JSON.parse(String(r.body)) as Record<string, unknown>;
  if (r.status !== 200) throw new Error(`${method} ${path} answered ${r.status}: ${String(r.body).slice(0, 300)}`);
  return { status: r.status, json };
}

/** Runs `make(i)` for i < n, 32 in flight. */
async function many(n: number, make: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < n; i += 32) await Promise.all(Array.from({ length: Math.min(32, n - i) }, (_, k) => make(i + k)));
}

/**
 * Median CPU µs (the process's, user and system) per call of `op` over `batches` batches of
 * `per` calls, one at a time. CPU rather than wall time: a durable write's wall time is mostly
 * its wait for the disk's sync, the same at any n.
 */
async function time(op: (i: number) => Promise<unknown>, batches: number, per: number): Promise<number> {
  const runs: number[] = [];
  let i = 0;
  for (let b = 0; b < batches; b++) {
    const start = process.cpuUsage();
    for (let k = 0; k < per; k++) await op(i++);
    const used = process.cpuUsage(start);
    runs.push((used.user + used.system) / per);
  }
  runs.sort((a, b) => a - b);
  return runs[Math.floor(runs.length / 2)] as number;
}

const id = (a: Answer): string => a.json.id as string;

const figures: { n: number; request: string; cpuUs: number; ratio: number; baseline: 'retrieve' | 'create' }[] = [];
for (const n of sizes) {
  const tree = await openTreeStripeRunner(root, `lived-${n}`);
  const { runner } = tree;
  const started = Date.now();
  // A set clock: every event made here is older than the instant the poll below asks from.
  const start = Date.parse('2026-06-01T00:00:00Z');
  await clock(runner, 'PUT', '/clock', { at: new Date(start).toISOString() });
  const customer = id(await call(runner, 'POST', '/v1/customers', 'name=Ada'));
  const product = id(await call(runner, 'POST', '/v1/products', 'name=Plan'));
  const plan = id(await call(runner, 'POST', '/v1/prices', `product=${product}&currency=usd&unit_amount=500&recurring[interval]=month`));
  const others: string[] = [];
  await many(Math.ceil(n / 10), async (i) => { others.push(id(await call(runner, 'POST', '/v1/customers', `name=Other&email=other${i}%40example.com`))); });
  await many(n, (i) => call(runner, 'POST', '/v1/payment_intents', `amount=${1000 + i}&currency=usd&metadata[order_id]=ord_${i}&payment_method=${i % 2 === 0 ? 'pm_card_bypassPending' : 'pm_card_visa'}&confirm=true&automatic_payment_methods[enabled]=true&automatic_payment_methods[allow_redirects]=never`));
  await many(n, (i) => call(runner, 'POST', '/v1/prices', `product=${product}&currency=usd&unit_amount=${100 + i}&lookup_key=key_${i}`));
  await many(n, (i) => call(runner, 'POST', '/v1/invoiceitems', `customer=${others[i % others.length] as string}&amount=100&currency=usd`));
  const items: string[] = [];
  await many(n, async (i) => {
    const sub = await call(runner, 'POST', '/v1/subscriptions', `customer=${others[i % others.length] as string}&items[0][price]=${plan}&collection_method=send_invoice&days_until_due=30`);
    items.push(((sub.json.items as { data: { id: string }[] }).data[0] as { id: string }).id);
  });
  const coupon = id(await call(runner, 'POST', '/v1/coupons', 'percent_off=10&duration=once'));
  await many(n, (i) => call(runner, 'POST', '/v1/promotion_codes', `promotion[type]=coupon&promotion[coupon]=${coupon}&code=CODE${i}`));
  const made = ((Date.now() - started) / 1000).toFixed(1);

  // Each row against its own kind of baseline, measured in the same world: reads against a
  // customer retrieve (after a warm-up, so the JIT has settled), writes against a customer create.
  const rows: [string, number, 'read' | 'write'][] = [];
  const retrieve = () => call(runner, 'GET', `/v1/customers/${customer}`);
  await time(retrieve, 3, 300);
  const read = await time(retrieve, 7, 300);
  const write = await time(() => call(runner, 'POST', '/v1/customers', 'name=Plain'), 7, 20);
  rows.push(['retrieve a customer (baseline for reads)', read, 'read']);
  rows.push(['create a customer (baseline for writes)', write, 'write']);
  rows.push(['GET /v1/balance', await time(() => call(runner, 'GET', '/v1/balance'), 7, 20), 'read']);
  rows.push(['list prices by lookup_keys[]', await time((i) => call(runner, 'GET', '/v1/prices', undefined, `lookup_keys[]=key_${(i * 7919) % n}`), 7, 20), 'read']);
  rows.push(['retrieve a subscription item', await time((i) => call(runner, 'GET', `/v1/subscription_items/${items[(i * 7919) % items.length] as string}`), 7, 20), 'read']);
  rows.push(['list promotion codes by code (as typed, any case)', await time((i) => call(runner, 'GET', '/v1/promotion_codes', undefined, `code=code${(i * 7919) % n}`), 7, 20), 'read']);
  rows.push(['search payment intents by a metadata value', await time((i) => call(runner, 'GET', '/v1/payment_intents/search', undefined, `query=${encodeURIComponent(`metadata['order_id']:'ORD_${(i * 7919) % n}'`)}`), 7, 20), 'read']);
  await clock(runner, 'POST', '/clock/advance', { by: '60s' });
  rows.push(['poll events since an instant (none newer)', await time(() => call(runner, 'GET', '/v1/events', undefined, `created[gte]=${start / 1000 + 60}&limit=100`), 7, 20), 'read']);
  rows.push(['search customers by email (n / 10 customers)', await time((i) => call(runner, 'GET', '/v1/customers/search', undefined, `query=${encodeURIComponent(`email:'Other${(i * 7919) % others.length}@example.com'`)}`), 7, 20), 'read']);
  rows.push(['create a payout (checks the available balance)', await time(() => call(runner, 'POST', '/v1/payouts', 'amount=1&currency=usd&method=instant'), 7, 20), 'write']);
  rows.push(['create a price with a lookup key', await time((i) => call(runner, 'POST', '/v1/prices', `product=${product}&currency=usd&unit_amount=100&lookup_key=new_${i}`), 7, 20), 'write']);
  rows.push(['create a promotion code (checks its code is free)', await time((i) => call(runner, 'POST', '/v1/promotion_codes', `promotion[type]=coupon&promotion[coupon]=${coupon}&code=NEW${i}`), 7, 20), 'write']);
  rows.push(['invoice item, then an invoice for its customer (3 writes)', await time(async () => {
    const who = id(await call(runner, 'POST', '/v1/customers', 'name=Billed'));
    await call(runner, 'POST', '/v1/invoiceitems', `customer=${who}&amount=100&currency=usd`);
    await call(runner, 'POST', '/v1/invoices', `customer=${who}&pending_invoice_items_behavior=include`);
  }, 7, 10), 'write']);
  rows.push(['subscribe a new customer, then delete it (3 writes)', await time(async () => {
    const who = id(await call(runner, 'POST', '/v1/customers', 'name=Leaving'));
    await call(runner, 'POST', '/v1/subscriptions', `customer=${who}&items[0][price]=${plan}&collection_method=send_invoice&days_until_due=30`);
    await call(runner, 'DELETE', `/v1/customers/${who}`);
  }, 7, 10), 'write']);
  console.log(`\n${root}, n = ${n} (made in ${made} s):`);
  for (const [name, us, kind] of rows) {
    const ratio = us / (kind === 'read' ? read : write);
    figures.push({ n, request: name, cpuUs: us, ratio, baseline: kind === 'read' ? 'retrieve' : 'create' });
    console.log(`  ${name.padEnd(58)} ${us.toFixed(1).padStart(8)} µs CPU  ${ratio.toFixed(2).padStart(7)}× ${kind === 'read' ? 'retrieve' : 'create'}`);
  }
  await tree.close();
}
writeBenchJson({ node: process.version, rows: figures });
