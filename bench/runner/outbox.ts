/**
 * Stripe creates while the webhook outbox grows: the built-in Stripe twin with one webhook
 * endpoint whose receiver is down (every attempt fails at once and waits an hour for its
 * retry), so each create leaves one more delivery in the outbox, as a load test against a
 * stopped receiver does. At each outbox size it times batches of 640 creates (32 in flight)
 * and prints the CPU per create: flat if sending costs the same whatever the outbox holds.
 * Takes a tree root, like ab.ts, to compare two commits:
 *
 *   node dist/bench/runner/outbox.js <tree root>
 */
import { resolve } from 'node:path';
import { stripeRequest } from './requests.js';
import { openTreeStripeRunner } from './tree.js';

const root = resolve(process.argv[2] ?? '.');
let attempts = 0;
const receiverDown: typeof fetch = async () => {
  attempts++;
  throw new TypeError('fetch failed');
};
const tree = await openTreeStripeRunner(root, 'outbox', { fetch: receiverDown, baseDelayMs: 3_600_000 });
const { runner } = tree;
const endpoint = await runner.handle(stripeRequest('POST', '/stripe/v1/webhook_endpoints', 'url=https%3A%2F%2Fhooks.example%2Fstripe&enabled_events[0]=*'));
if (endpoint.status !== 200) throw new Error(`webhook endpoint answered ${endpoint.status}`);

const create = (): Promise<unknown> => runner.handle(stripeRequest('POST', '/stripe/v1/customers', 'email=grace%40example.com&name=Grace'));
async function creates(n: number): Promise<void> {
  for (let i = 0; i < n; i += 32) await Promise.all(Array.from({ length: 32 }, create));
}
/** Lets the deliverer catch up: every delivery queued so far attempted once. */
async function settle(): Promise<void> {
  while (attempts < runner.deliverer.pending()) await new Promise((r) => setTimeout(r, 5));
}

await creates(640); // warm-up: the JIT and the twin's first records
let made = 640;
for (const size of [1_000, 5_000, 10_000, 20_000]) {
  await creates(Math.max(0, size - made));
  made = Math.max(made, size);
  await settle();
  const outbox = runner.deliverer.pending();
  const cpu: number[] = [];
  for (let round = 0; round < 3; round++) {
    const before = process.cpuUsage();
    await creates(640);
    await settle();
    const used = process.cpuUsage(before);
    cpu.push((used.user + used.system) / 640);
    made += 640;
  }
  cpu.sort((a, b) => a - b);
  console.log(`${root}: outbox of ${String(outbox).padStart(6)}: ${cpu[1]!.toFixed(1)} µs CPU per create and its first attempt (median of 3 batches of 640)`);
}
await tree.close();
