/**
 * Per-request cost through the whole engine: a request object in, the route matched, the
 * handler run (the built-in twins in V8, as a world serves them, and the same bundles in the
 * world's QuickJS sandbox, as a twin built from a user's sources runs), the entry appended and
 * made durable (group commit on LMDB), the response out. The baseline, in the same run, is a
 * plain `node:vm` call of a handler-shaped function (JSON in, JSON out).
 *
 * Run (from the repository root, after `make build`):
 *   node dist/bench/runner/run.js
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import vm from 'node:vm';
import { Bench } from 'tinybench';
import { openLmdbStorage } from '../../runtime/store/index.js';
import { openWorldRunner } from '../../runtime/runner/index.js';
import type { WorldRequest } from '../../runtime/runner/types.js';
import { helloRequest, stripeRequest } from './requests.js';
import { buildTwin } from '../../sdk/twin/build.js';
import { writeBenchJson } from '../results/json.js';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

async function main(dir: string): Promise<void> {
  const storage = openLmdbStorage(dir);
  // The two twins measured, built from their sources (not every built-in twin: one that is
  // mid-work elsewhere must not stop this benchmark). dist/bench/runner → the repository root.
  const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..');
  const hello = await buildTwin(join(root, 'twins', 'hello', 'twin', 'index.ts'));
  const stripeEntry = join(root, 'twins', 'stripe', 'twin', 'index.ts');
  const stripe = existsSync(stripeEntry) ? await buildTwin(stripeEntry) : undefined;
  const bundles = (stripe ? [hello, stripe] : [hello]).map((t) => ({ ...t, trusted: true }));
  const runner = await openWorldRunner({ storage, world: 'bench', twins: bundles });
  const sandboxed = await openWorldRunner({ storage, world: 'bench-quickjs', twins: bundles, trustTwins: false });
  /** One greeting and one customer made first; the reads of them. */
  const seed = async (r: typeof runner): Promise<{ get: WorldRequest; customerGet: WorldRequest | undefined }> => {
    const created = await r.handle(helloRequest('POST', '/hello/v1/greetings', { name: 'Ada' }));
    const get = helloRequest('GET', `/hello/v1/greetings/${(JSON.parse(String(created.body)) as { id: string }).id}`);
    if (!stripe) return { get, customerGet: undefined };
    const customer = await r.handle(stripeRequest('POST', '/stripe/v1/customers', 'email=ada%40example.com&name=Ada'));
    if (customer.status !== 200) throw new Error(`the Stripe twin answered ${customer.status}: ${String(customer.body)}`);
    return { get, customerGet: stripeRequest('GET', `/stripe/v1/customers/${(JSON.parse(String(customer.body)) as { id: string }).id}`) };
  };
  const { get, customerGet } = await seed(runner);
  const inQuickJs = await seed(sandboxed);

  const context = vm.createContext({});
  vm.runInContext(
    `function handle(s) { const req = JSON.parse(s); return JSON.stringify({ status: 200, body: { id: req.id, object: 'greeting', name: 'Ada', message: 'Hello, Ada!', status: 'active', created: 1, expires_at: null, metadata: {} } }); }`,
    context,
  );
  const vmHandle = vm.runInContext('handle', context) as (s: string) => string;
  const vmInput = JSON.stringify({ method: 'GET', path: get.path, id: get.path.split('/').pop() });

  const CONCURRENT = 32;
  const bench = new Bench({ time: 2000, warmup: true });
  const fns = new Map<string, () => unknown>();
  const add = (name: string, fn: () => unknown): void => {
    fns.set(name, fn);
    bench.add(name, fn);
  };
  add('node:vm call (baseline)', () => {
    vmHandle(vmInput);
  });
  const postCustomers = (r: typeof runner) => () =>
    Promise.all(Array.from({ length: CONCURRENT }, () => r.handle(stripeRequest('POST', '/stripe/v1/customers', 'email=grace%40example.com&name=Grace'))));
  add('hello GET by id (V8)', () => runner.handle(get));
  add('hello POST (durable, one at a time) (V8)', () => runner.handle(helloRequest('POST', '/hello/v1/greetings', { name: 'Grace' })));
  add(`hello POST (durable, ${CONCURRENT} in flight, per request) (V8)`, () =>
    Promise.all(Array.from({ length: CONCURRENT }, () => runner.handle(helloRequest('POST', '/hello/v1/greetings', { name: 'Grace' })))),
  );
  if (customerGet) {
    add('Stripe GET customer by id (V8)', () => runner.handle(customerGet));
    add(`Stripe POST customer (durable, ${CONCURRENT} in flight, per request) (V8)`, postCustomers(runner));
  }
  add('hello GET by id (QuickJS)', () => sandboxed.handle(inQuickJs.get));
  if (inQuickJs.customerGet) {
    const g = inQuickJs.customerGet;
    add('Stripe GET customer by id (QuickJS)', () => sandboxed.handle(g));
    add(`Stripe POST customer (durable, ${CONCURRENT} in flight, per request) (QuickJS)`, postCustomers(sandboxed));
  }
  await bench.run();

  // CPU time of this process (all threads) per request, beside the wall-clock latency: on a
  // shared machine it is the steadier figure, and for the durable rows the difference is
  // mostly the wait for the disk. Measured after the timed runs, one second per task.
  const cpu = new Map<string, number>();
  for (const t of bench.tasks) {
    const fn = fns.get(t.name);
    if (fn === undefined) continue;
    const from = process.cpuUsage();
    const until = performance.now() + 1000;
    let n = 0;
    while (performance.now() < until) {
      await fn();
      n++;
    }
    const used = process.cpuUsage(from);
    cpu.set(t.name, (used.user + used.system) / n);
  }

  const latency = (name: string): { mean: number; p50: number } => {
    const l = (bench.tasks.find((t) => t.name === name)?.result as { latency?: { mean: number; p50?: number } } | undefined)?.latency;
    return { mean: l?.mean ?? NaN, p50: l?.p50 ?? NaN };
  };
  const base = latency('node:vm call (baseline)').mean * 1000;
  console.log(`\nnode ${process.version}; time per request (for the in-flight rows: an iteration's time / ${CONCURRENT})\n`);
  console.log(`| task | µs per request (mean) | µs (median) | × node:vm call (mean) | CPU µs per request (all threads) |\n|---|---:|---:|---:|---:|`);
  const json: { task: string; usMean: number; usMedian: number; ratioToVm: number; cpuUs: number }[] = [];
  for (const t of bench.tasks) {
    const per = t.name.includes('in flight') ? CONCURRENT : 1;
    const l = latency(t.name);
    const us = (l.mean / per) * 1000;
    const cpuUs = (cpu.get(t.name) ?? NaN) / per;
    console.log(`| ${t.name} | ${us.toFixed(2)} | ${((l.p50 / per) * 1000).toFixed(2)} | ${(us / base).toFixed(1)}× | ${cpuUs.toFixed(1)} |`);
    json.push({ task: t.name, usMean: us, usMedian: (l.p50 / per) * 1000, ratioToVm: us / base, cpuUs });
  }
  writeBenchJson({ node: process.version, rows: json });
  await runner.close();
  await sandboxed.close();
  await storage.close();
}

// The world's directory goes whether the run ends well or not.
const benchDir = mkdtempSync(join(tmpdir(), 'kit-bench-runner-'));
try {
  await main(benchDir);
} finally {
  rmSync(benchDir, { recursive: true, force: true });
}
