/**
 * Sandbox micro benchmark: a QuickJS world (runtime/sandbox) against a plain `node:vm` context
 * measured in the same run.
 *
 * - start a world: instantiate + runtime + load a 50 KB script (vm: new context + run the script)
 * - a call with 1 KB of JSON in and out (vm: `runInContext` of `handle(input)`)
 * - a host callback: a call making 100 `__host_call`s less a call making none, / 100
 * - the same call through a SupervisedWorker (postMessage round trip + the call in the worker)
 * - memory of 50 idle worlds, each with the 50 KB script loaded: wasm bytes and RSS delta
 * - what a step of the budget is worth in time, for five kinds of loop
 * - a trusted twin's writes crossing into the host (`jsonCopy`: a Stripe create's customer,
 *   event, emitted event and account twice) against the JSON text round trip
 * - the Stripe twin's create as it is now: its clone of the customer, then the record and the
 *   event holding that clone crossing at the commit, handed over (`jsonAdopt`) against put
 *
 * Run (from the repository root, after `npx tsc -p tsconfig.json`):
 *   node --expose-gc dist/bench/sandbox/run.js
 */
import { Bench } from 'tinybench';
import vm from 'node:vm';
import { loadSandboxModule, WorldSandbox, DEFAULT_CALL_STEPS } from '../../runtime/sandbox/index.js';
import type { SandboxModule, HostCall } from '../../runtime/sandbox/index.js';
import { SupervisedWorker } from '../../runtime/worker/index.js';
import { forgetClones, jsonAdopt, jsonClone, jsonCopy } from '../../runtime/sandbox/json-copy.js';
import { writeBenchJson } from '../results/json.js';

/** About 50 KB of script shaped like a bundle: many small functions and one entry point. */
function script50k(): string {
  const parts: string[] = [];
  for (let i = 0; parts.join('\n').length < 50_000; i++) {
    parts.push(`function helper${i}(o) { const r = {}; for (const k of Object.keys(o)) r[k + '_${i}'] = typeof o[k] === 'number' ? o[k] * ${i} : String(o[k]); return r; }`);
  }
  parts.push(`
    function handle(s) { const o = JSON.parse(s); o.count = (o.count || 0) + 1; return JSON.stringify(o); }
    function noop(s) { return s; }
    function hosty(s) { const n = Number(s); let last = ''; for (let i = 0; i < n; i++) last = __host_call('get', '{"type":"customer","id":"cus_1"}'); return last; }
  `);
  return parts.join('\n');
}

const JSON_1KB = JSON.stringify({
  id: 'cus_0000000000000001',
  object: 'customer',
  email: 'jenny.rosen@example.com',
  metadata: Object.fromEntries(Array.from({ length: 24 }, (_, i) => [`key_${i}`, `value number ${i}`])),
  items: Array.from({ length: 8 }, (_, i) => ({ id: `item_${i}`, amount: 1000 + i, currency: 'usd' })),
});
/**
 * What a Stripe create hands the host, made in a V8 context of its own as a trusted twin makes
 * them: the customer record, its event record, the emitted event and the account (put twice).
 * 64 of them, with ids of their own, so no one object stays hot.
 */
const makeCreateValues = `(function (i) {
  const c = { id: 'cus_00000' + i + 'CfhRZsV0', object: 'customer', address: null, balance: 0, created: 1795360724, currency: null, default_source: null, delinquent: false, description: null, discount: null, email: 'a@b.com', invoice_prefix: 'E153BA4A', invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null }, livemode: false, metadata: {}, name: 'Ada', next_invoice_sequence: 1, phone: null, preferred_locales: [], shipping: null, tax_exempt: 'none', test_clock: null };
  const e = { id: 'evt_00000' + i + 'id5oxEAkwIXexDZMCs', object: 'event', api_version: '2026-10-28.endive', created: 1795360724, data: { object: c }, livemode: false, pending_webhooks: 0, request: { id: 'req_YdOnw6lMjzvE7Q', idempotency_key: null }, type: 'customer.created' };
  return [{ s: 5, o: c }, { s: 6, o: e }, { ...e, account: 'acct_s8WuIAFjYU517zmP' }, { n: i, hooks: 0 }, { n: i + 1, hooks: 0 }];
})`;

/** The Stripe twin's commit of a create: the customer record and its event, both holding the twin's clone `now`. */
const makeCommitValues = `(function (now, i) {
  const e = { id: 'evt_00000' + i + 'id5oxEAkwIXexDZMCs', object: 'event', api_version: '2026-10-28.endive', created: 1795360724, data: { object: now }, livemode: false, pending_webhooks: 0, request: { id: 'req_YdOnw6lMjzvE7Q', idempotency_key: null }, type: 'customer.created' };
  return [{ s: 5, o: now }, { s: 6, o: e }];
})`;

const HOST_ANSWER = JSON.stringify({ id: 'cus_1', object: 'customer', email: 'a@example.com' });

interface Row {
  task: string;
  value: string;
  ratio: string;
}

function mean(bench: Bench, name: string): number {
  const res = bench.tasks.find((t) => t.name === name)?.result;
  if (res === undefined || !('latency' in res)) throw new Error(`no result for ${name}`);
  return res.latency.mean; // ms
}

function rss(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  return process.memoryUsage().rss;
}

async function run(): Promise<string> {
  const mod: SandboxModule = await loadSandboxModule();
  const source = script50k();
  const hostCall: HostCall = () => HOST_ANSWER;

  // Worlds and contexts kept for the call benchmarks.
  const world = WorldSandbox.create(mod);
  const loaded = world.load('w', source, { hostCall: true });
  if ('error' in loaded) throw new Error(loaded.error.message);
  const check = world.call('w', 'handle', JSON_1KB);
  if ('error' in check || check.ok.length < 1000) throw new Error('the call does not answer 1 KB');

  const ctx = vm.createContext({ __host_call: (_op: string, _arg: string) => HOST_ANSWER, input: '' });
  new vm.Script(source).runInContext(ctx);
  const callScript = new vm.Script('handle(input)');
  const noopScript = new vm.Script('noop(input)');
  const host0 = new vm.Script("hosty('0')");
  const host100 = new vm.Script("hosty('100')");

  const worker = new SupervisedWorker<{ op: string; [k: string]: unknown }, unknown>({
    script: new URL('../../runtime/worker/fixtures/test-worker.js', import.meta.url),
    workerData: {},
    name: 'bench',
  });
  await worker.call({ op: 'load', name: 'w', source });

  const makeCreate = vm.runInContext(makeCreateValues, vm.createContext({})) as (i: number) => unknown[];
  const creates = Array.from({ length: 64 }, (_, i) => makeCreate(i));
  let nextCreate = 0;
  const guestRealm = vm.createContext({});
  const makeCustomer = vm.runInContext(`(i) => (${makeCreateValues})(i)[0].o`, guestRealm) as (i: number) => unknown;
  const makeCommit = vm.runInContext(makeCommitValues, guestRealm) as (now: unknown, i: number) => unknown[];
  const customers = Array.from({ length: 64 }, (_, i) => makeCustomer(i));
  /** One call: the twin clones the customer (`copyJson`: the host's clone), then commits the record and event that hold the clone. */
  const commitCreate = (cross: (v: unknown) => unknown): void => {
    const i = nextCreate++ & 63;
    const now = jsonClone(customers[i]);
    for (const v of makeCommit(now, i)) if (cross(v) !== undefined) sink++;
    forgetClones();
  };

  const bench = new Bench({ time: 1500, warmupTime: 300 });
  let sink = 0;
  bench.add('jsonCopy, a Stripe create', () => {
    for (const v of creates[nextCreate++ & 63] as unknown[]) if (jsonCopy(v) !== undefined) sink++;
  });
  bench.add('JSON text round trip, a Stripe create', () => {
    for (const v of creates[nextCreate++ & 63] as unknown[]) if (JSON.parse(JSON.stringify(v)) !== undefined) sink++;
  });
  bench.add('Stripe create commit, handed over', () => commitCreate(jsonAdopt));
  bench.add('Stripe create commit, put', () => commitCreate(jsonCopy));
  bench.add('world start: create + load 50 KB + dispose', () => {
    const w = WorldSandbox.create(mod);
    const r = w.load('w', source);
    if ('ok' in r) sink++;
    w.dispose();
  });
  bench.add('world instantiate only: create + dispose', () => {
    const w = WorldSandbox.create(mod);
    sink++;
    w.dispose();
  });
  bench.add('vm: createContext + run 50 KB', () => {
    const c = vm.createContext({});
    new vm.Script(source).runInContext(c);
    sink++;
  });
  bench.add('sandbox call, 1 KB JSON in/out', () => {
    const r = world.call('w', 'handle', JSON_1KB);
    if ('ok' in r) sink += r.ok.length;
  });
  bench.add('vm runInContext call, 1 KB JSON in/out', () => {
    ctx['input'] = JSON_1KB;
    sink += (callScript.runInContext(ctx) as string).length;
  });
  bench.add('sandbox call, trivial', () => {
    const r = world.call('w', 'noop', 'x');
    if ('ok' in r) sink += r.ok.length;
  });
  bench.add('vm runInContext call, trivial', () => {
    ctx['input'] = 'x';
    sink += (noopScript.runInContext(ctx) as string).length;
  });
  bench.add('sandbox call making 0 host calls', () => {
    const r = world.call('w', 'hosty', '0', hostCall);
    if ('ok' in r) sink++;
  });
  bench.add('sandbox call making 100 host calls', () => {
    const r = world.call('w', 'hosty', '100', hostCall);
    if ('ok' in r) sink++;
  });
  bench.add('vm call making 0 host calls', () => {
    host0.runInContext(ctx);
    sink++;
  });
  bench.add('vm call making 100 host calls', () => {
    host100.runInContext(ctx);
    sink++;
  });
  bench.add('worker round trip, echo 1 KB string', async () => {
    sink += ((await worker.call({ op: 'echo', value: JSON_1KB })) as string).length;
  });
  bench.add('worker: sandbox call, 1 KB JSON in/out', async () => {
    const r = (await worker.call({ op: 'call', name: 'w', fn: 'handle', input: JSON_1KB })) as { ok?: string };
    sink += r.ok?.length ?? 0;
  });
  await bench.run();
  await worker.close();

  const start = mean(bench, 'world start: create + load 50 KB + dispose');
  const inst = mean(bench, 'world instantiate only: create + dispose');
  const vmStart = mean(bench, 'vm: createContext + run 50 KB');
  const call = mean(bench, 'sandbox call, 1 KB JSON in/out');
  const vmCall = mean(bench, 'vm runInContext call, 1 KB JSON in/out');
  const trivial = mean(bench, 'sandbox call, trivial');
  const vmTrivial = mean(bench, 'vm runInContext call, trivial');
  const host = (mean(bench, 'sandbox call making 100 host calls') - mean(bench, 'sandbox call making 0 host calls')) / 100;
  const vmHost = (mean(bench, 'vm call making 100 host calls') - mean(bench, 'vm call making 0 host calls')) / 100;
  const echo = mean(bench, 'worker round trip, echo 1 KB string');
  const workerCall = mean(bench, 'worker: sandbox call, 1 KB JSON in/out');
  const copied = mean(bench, 'jsonCopy, a Stripe create');
  const roundTrip = mean(bench, 'JSON text round trip, a Stripe create');
  const handedOver = mean(bench, 'Stripe create commit, handed over');
  const putCommit = mean(bench, 'Stripe create commit, put');

  // Memory: 50 idle worlds with the script loaded, against 50 vm contexts with the same script.
  const before = rss();
  const worlds: WorldSandbox[] = [];
  for (let i = 0; i < 50; i++) {
    const w = WorldSandbox.create(mod);
    w.load('w', source);
    worlds.push(w);
  }
  const afterWorlds = rss();
  const wasm = worlds.reduce((n, w) => n + w.memoryUsage().wasmBytes, 0);
  for (const w of worlds) w.dispose();
  worlds.length = 0;
  const beforeVm = rss();
  const contexts: vm.Context[] = [];
  for (let i = 0; i < 50; i++) {
    const c = vm.createContext({});
    new vm.Script(source).runInContext(c);
    contexts.push(c);
  }
  const afterVm = rss();
  sink += contexts.length;
  const perWorld = (afterWorlds - before) / 50;
  const perVm = (afterVm - beforeVm) / 50;

  // What a step is worth in time: five loops stopped by a budget of 500 steps (median of 3).
  const loops: [string, string][] = [
    ['`for (;;) {}`', 'for (;;) {}'],
    ['`for (;;) i++`', 'let i = 0; for (;;) i++;'],
    ['`for (;;) i = f(i)`', 'function f(x) { return x + 1; } let i = 0; for (;;) i = f(i);'],
    ["`/(a+)+$/.test('a'.repeat(30) + 'b')`", "/(a+)+$/.test('a'.repeat(30) + 'b');"],
    ['`for (;;) o = { a: i, b: [i] }`', 'let o; for (let i = 0; ; i++) o = { a: i, b: [i] };'],
  ];
  const budgetRows: Row[] = [];
  for (const [label, body] of loops) {
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const w = WorldSandbox.create(mod, { callSteps: 500 });
      w.load('l', `function go() { ${body} return ''; }`);
      const t0 = performance.now();
      const r = w.call('l', 'go', '');
      times.push(performance.now() - t0);
      if (!('error' in r) || r.error.code !== 'timeout') throw new Error(`${label} was not stopped`);
      w.dispose();
    }
    times.sort((a, b) => a - b);
    const per1000 = (times[1] ?? 0) * 2;
    budgetRows.push({ task: label, value: `${per1000.toFixed(0)} ms per 1 000 steps`, ratio: `default budget ≈ ${((per1000 * DEFAULT_CALL_STEPS) / 1000 / 1000).toFixed(1)} s` });
  }

  const us = (ms: number): string => `${(ms * 1000).toFixed(1)} µs`;
  const x = (a: number, b: number): string => `${(a / b).toFixed(2)}×`;
  const rows: Row[] = [
    { task: 'start a world: instantiate + runtime + load 50 KB script', value: `${start.toFixed(2)} ms`, ratio: `${x(start, vmStart)} vm` },
    { task: '— of which instantiate + runtime (no script)', value: `${inst.toFixed(2)} ms`, ratio: `${x(inst, vmStart)} vm` },
    { task: 'vm baseline: createContext + run the 50 KB script', value: `${vmStart.toFixed(2)} ms`, ratio: '1×' },
    { task: 'call, 1 KB JSON in and out', value: us(call), ratio: `${x(call, vmCall)} vm` },
    { task: 'vm baseline: runInContext `handle(input)`', value: us(vmCall), ratio: '1×' },
    { task: 'call, trivial (`noop`, 1 character in and out)', value: us(trivial), ratio: `${x(trivial, vmTrivial)} vm` },
    { task: 'vm baseline: runInContext `noop(input)`', value: us(vmTrivial), ratio: '1×' },
    { task: 'host callback (`__host_call`, ~60 B answer)', value: us(host), ratio: `${x(host, vmHost)} vm` },
    { task: 'vm baseline: host function call', value: us(vmHost), ratio: '1×' },
    { task: 'SupervisedWorker round trip (echo 1 KB string)', value: us(echo), ratio: `${x(echo, call)} in-process sandbox call` },
    { task: 'SupervisedWorker + sandbox call, 1 KB JSON in and out', value: us(workerCall), ratio: `${x(workerCall, call)} in-process sandbox call` },
    { task: 'idle world, wasm memory (50 worlds, 50 KB script each)', value: `${(wasm / 50 / 2 ** 20).toFixed(1)} MiB`, ratio: '' },
    { task: 'idle world, RSS delta (50 worlds)', value: `${(perWorld / 2 ** 20).toFixed(2)} MiB`, ratio: `${x(perWorld, perVm)} vm` },
    { task: 'vm baseline: RSS delta per context (50 contexts, same script)', value: `${(perVm / 2 ** 20).toFixed(2)} MiB`, ratio: '1×' },
    ...budgetRows.map((r) => ({ ...r, task: `step budget: ${r.task}` })),
    { task: "a trusted twin's values into the host (`jsonCopy`; a Stripe create's five)", value: us(copied), ratio: `${x(copied, roundTrip)} text round trip` },
    { task: 'baseline: `JSON.parse(JSON.stringify(v))` of the same', value: us(roundTrip), ratio: '1×' },
    { task: "the Stripe twin's clone of a new customer, then its record and event handed over (`jsonAdopt`)", value: us(handedOver), ratio: `${x(handedOver, putCommit)} put` },
    { task: 'baseline: the same, put (`jsonCopy` of both)', value: us(putCommit), ratio: '1×' },
  ];
  const table = ['| task | value | ratio |', '|---|---|---|', ...rows.map((r) => `| ${r.task} | ${r.value} | ${r.ratio} |`)].join('\n');
  // The rows as printed (value and ratio carry their units).
  writeBenchJson({ node: process.version, rows });
  world.dispose();
  return `${table}\n\n(sink ${sink > 0 ? 'ok' : 'empty'}; gc ${typeof (globalThis as { gc?: unknown }).gc === 'function' ? 'exposed' : 'not exposed: RSS figures are rougher'}; Node ${process.version})`;
}

run().then(
  (text) => console.log(text),
  (e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  },
);
