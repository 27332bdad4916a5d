/**
 * What the world's worker thread costs: the same Stripe GET through `openLocalWorld` served in
 * a worker thread (the default) and inline (`kit world serve --inline`), alternating, 32 in
 * flight, 10 batches of 3 200 each; the fastest and median batch in wall µs per request, and
 * the process's CPU per request (both threads) at the median batch. Pin it to one core to see
 * what the wrk benchmark sees (server on one core):
 *
 *   taskset -c 0 node dist/bench/runner/thread.js
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalWorld } from '../../runtime/runner/index.js';
import { stripeRequest } from './requests.js';
import { buildGuestRuntime, loadBuiltinTwins } from '../../sdk/twin/build.js';

const text = (body: Uint8Array | string): string => (typeof body === 'string' ? body : new TextDecoder().decode(body));

const twin = (await loadBuiltinTwins()).get('stripe');
if (!twin) throw new Error('no built-in Stripe twin');
const guestRuntime = await buildGuestRuntime();
for (const thread of ['worker', 'main', 'worker', 'main'] as const) {
  const dir = mkdtempSync(join(tmpdir(), 'kit-thread-'));
  const world = await openLocalWorld({ dir, org: 'local', world: 'bench', twins: [twin], guestRuntime, thread });
  const made = await world.handle(stripeRequest('POST', '/stripe/v1/customers', 'email=ada%40example.com'));
  const id = (JSON.parse(text(made.body)) as { id: string }).id;
  const batches: { wall: number; cpu: number }[] = [];
  for (let b = 0; b < 10; b++) {
    const n = 3200;
    const start = process.hrtime.bigint();
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < n; i += 32) await Promise.all(Array.from({ length: 32 }, () => world.handle(stripeRequest('GET', `/stripe/v1/customers/${id}`))));
    const cpu = process.cpuUsage(cpu0);
    batches.push({ wall: Number(process.hrtime.bigint() - start) / 1e3 / n, cpu: (cpu.user + cpu.system) / n });
  }
  batches.sort((a, b) => a.wall - b.wall);
  const median = batches[5]!;
  console.log(`${thread}: fastest ${batches[0]!.wall.toFixed(1)} µs, median ${median.wall.toFixed(1)} µs wall per request; CPU ${median.cpu.toFixed(1)} µs at the median`);
  await world.close();
  rmSync(dir, { recursive: true, force: true });
}
