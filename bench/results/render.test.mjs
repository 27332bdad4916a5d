// node --test bench/results/render.test.mjs (not part of `make test`, whose vitest run covers
// runtime/, host/, sdk/, twins/ and test/ only).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { END, render, START, splice } from './render.mjs';

const row = (id, rps, cpu, extra = {}) => ({
  id,
  name: `${id} row`,
  rounds: 1,
  rps,
  bestRps: rps,
  ratioToUws: rps / 100000,
  ratioToUwsRange: [rps / 100000, rps / 100000],
  ratioToNodeHttp: rps / 50000,
  cpuUsPerRequest: cpu,
  cpuRatioToUws: cpu / 5,
  p50Ms: 1,
  p99Ms: 2,
  non2xx: 0,
  ...extra,
});

const latest = {
  commit: { sha: 'a'.repeat(40), short: 'aaaaaaa', dirty: true },
  date: '2026-01-01T00:00:00.000Z',
  machine: { nproc: 2, cpuModel: 'Test CPU', memoryBytes: 8 * 2 ** 30, node: 'v20.20.2', kernel: 'Linux 6', loadBefore: [1, 2, 3], loadAfter: [4, 5, 6] },
  suites: {
    http: {
      settings: { connections: 50, threads: 1, duration: '5s', rounds: 3, serverCpu: 0, clientCpu: 1 },
      loadAverage: { min: 1, max: 2, median: 1.5 },
      rows: [row('uws', 100000, 5), row('node-http', 50000, 10), row('stripe-get', 5000, 150), row('emulate-get', 20000, 40, { non2xx: 3 }), row('stripe-post', 1000, 800)],
    },
    router: { rows: [{ task: 'trie | match', usPerRequest: 0.5, ratioToNaive: 0.25 }] },
    'lived-in': { rows: [{ n: 2000, request: 'GET /v1/balance', cpuUs: 18.44, ratio: 1.171, baseline: 'retrieve' }] },
  },
  failed: ['engine'],
};

test('render: commit, machine, every HTTP row with its two ratios and latencies', () => {
  const md = render(latest);
  assert.match(md, /Commit `aaaaaaa` \(with uncommitted changes\)/);
  assert.match(md, /2 CPUs \(Test CPU\), 8\.0 GiB, Node v20\.20\.2/);
  assert.match(md, /load average 1\.00 2\.00 3\.00 before, 4\.00 5\.00 6\.00 after/);
  assert.match(md, /Failed: engine\./);
  assert.match(md, /\| `uws` \| uws row \| 100000 \| 1\.00 \| 2\.00 \| 5\.0 \| 1\.0 \| 1\.00 \| 2\.00 \|/);
  assert.match(md, /\| `stripe-get` \| stripe-get row \| 5000 \| 0\.050 \| 0\.10 \| 150\.0 \| 30\.0 \|/);
  assert.match(md, /emulate-get row \(3 non-2xx\)/);
});

test('render: the peer table pairs only the requests both sides ran', () => {
  const md = render(latest);
  assert.match(md, /\| retrieve a customer \| 5000 \| 20000 \| 0\.25 \| 3\.75 \| 2\.00 \| 2\.00 \|/);
  assert.doesNotMatch(md, /create a customer \|/); // no emulate-post row
  assert.doesNotMatch(md, /list ten customers \|/);
});

test('render: issue 30 targets, met or not, from the same run', () => {
  const md = render(latest);
  assert.match(md, /Issue 30's targets in this run/);
  assert.doesNotMatch(md, /Issue 8|--inline/);
  assert.match(md, /\| retrieve ≥ 0\.25× the uWS hello world \| 0\.050× \| \*\*not met\*\* \|/);
  assert.match(md, /\| retrieve ≥ 3× emulate \| 0\.25× \| \*\*not met\*\* \|/);
  assert.match(md, /\| p99 below emulate's on retrieve \| 2\.00 vs 2\.00 ms \| \*\*not met\*\* \|/); // equal is not below
  // Only the targets whose rows ran: no emulate-post, emulate-list or uws-durable row here.
  assert.doesNotMatch(md, /create ≥ 1\.3× emulate|on list|on create|durable-write floor/);

  const all = render({
    suites: {
      http: {
        rows: [
          row('uws', 100000, 5),
          row('uws-durable', 20000, 40),
          row('stripe-get', 40000, 20, { p99Ms: 1 }),
          row('stripe-post', 6500, 150, { p99Ms: 9 }),
          row('stripe-list', 12000, 80, { p99Ms: 6 }),
          row('emulate-get', 12000, 100, { p99Ms: 4 }),
          row('emulate-post', 5000, 200, { p99Ms: 8 }),
          row('emulate-list', 7000, 140, { p99Ms: 7 }),
        ],
      },
    },
  });
  assert.match(all, /\| retrieve ≥ 0\.25× the uWS hello world \| 0\.40× \| met \|/);
  assert.match(all, /\| retrieve ≥ 3× emulate \| 3\.33× \| met \|/);
  assert.match(all, /\| create ≥ 1\.3× emulate \| 1\.30× \| met \|/); // at the target is met
  assert.match(all, /\| p99 below emulate's on retrieve \| 1\.00 vs 4\.00 ms \| met \|/);
  assert.match(all, /\| p99 below emulate's on list \| 6\.00 vs 7\.00 ms \| met \|/);
  assert.match(all, /\| p99 below emulate's on create \| 9\.00 vs 8\.00 ms \| \*\*not met\*\* \|/);
  assert.match(all, /\| create ≥ 0\.30× the durable-write floor's requests\/s \| 0\.33× \| met \|/);
  assert.match(all, /floor \(`uws-durable`[^)]*\) ran at 0\.20× the uWS hello world; the Stripe create at 0\.33× the floor's requests\/s, 3\.75× its CPU per request\./);
  // Seven targets, in the order.
  const targets = all.slice(all.indexOf("Issue 30's targets")).split('\n').filter((l) => /^\| (retrieve|create|p99) /.test(l));
  assert.deepEqual(
    targets.map((l) => l.split(' | ')[0].slice(2)),
    ['retrieve ≥ 0.25× the uWS hello world', 'retrieve ≥ 3× emulate', 'create ≥ 1.3× emulate', "p99 below emulate's on retrieve", "p99 below emulate's on list", "p99 below emulate's on create", "create ≥ 0.30× the durable-write floor's requests/s"],
  );

  const slowFloor = render({ suites: { http: { rows: [row('uws', 100000, 5), row('uws-durable', 20000, 40), row('stripe-post', 5000, 160)] } } });
  assert.match(slowFloor, /\| create ≥ 0\.30× the durable-write floor's requests\/s \| 0\.25× \| \*\*not met\*\* \|/);
});

test('render: each default row against its before (worker thread) row, where both ran', () => {
  const md = render({
    suites: {
      http: {
        rows: [
          row('uws', 100000, 5),
          row('stripe-get', 30000, 20, { p99Ms: 1.5 }),
          row('stripe-get-worker', 25000, 24, { p99Ms: 3 }),
          row('stripe-post', 6000, 150),
          row('stripe-post-worker', 7500, 140, { p99Ms: 1 }),
          row('stripe-list', 12000, 80),
        ],
      },
    },
  });
  assert.match(md, /The default against the previous default \(the world in a worker thread of its own\), same run: retrieve \(`stripe-get` \/ `stripe-get-worker`\) 1\.20× the requests\/s, p99 1\.50 vs 3\.00 ms; create \(`stripe-post` \/ `stripe-post-worker`\) 0\.80× the requests\/s, p99 2\.00 vs 1\.00 ms\./);
  assert.doesNotMatch(md, /stripe-list-worker/); // no before row for the list
  assert.doesNotMatch(render(latest), /previous default/); // no worker rows at all
});

test('render: other suites as tables, with | escaped', () => {
  assert.match(render(latest), /\| trie \\\| match \| 0\.500 \| 0\.250 \|/);
  assert.match(render(latest), /\| GET \/v1\/balance \| 2000 \| 18\.4 \| 1\.17 \| retrieve \|/);
});

test('render: missing figures show as dashes, not NaN', () => {
  const md = render({ suites: { http: { rows: [row('uws', 100000, 5, { ratioToNodeHttp: null })] } } });
  assert.match(md, /\| `uws` \| uws row \| 100000 \| 1\.00 \| – \|/);
  assert.doesNotMatch(md, /NaN/);
});

test('splice: replaces only what lies between the markers, and refuses a README without them', () => {
  const readme = `# bench\n\n${START}\nold\n${END}\n\nrest\n`;
  assert.equal(splice(readme, 'new'), `# bench\n\n${START}\nnew\n${END}\n\nrest\n`);
  assert.equal(splice(splice(readme, 'new'), 'new'), splice(readme, 'new'));
  assert.throws(() => splice('# bench\n', 'x'), /no <!-- bench:latest:start -->/);
});
