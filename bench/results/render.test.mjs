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
  // Seven targets, in the issue's order.
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

const hostFigures = {
  load: { branches: [1, 2], isolation: [3.5, 4] },
  branches: {
    customers: 1000,
    fillSeconds: 120,
    small: { parent: 'bench/small', entries: 1000, samples: 30, postMs: 10, firstReadMs: 20, totalMs: 30, totalP90Ms: 40, secondReadMs: 2, hostCpuMs: 8 },
    big: { parent: 'bench/big', entries: 1000000, samples: 30, postMs: 11, firstReadMs: 22, totalMs: 33, totalP90Ms: 44, secondReadMs: 2 },
    ratio: { post: 1.1, firstRead: 1.1, total: 1.1, hostCpu: 0.95 },
  },
  worlds: {
    worlds: 1000,
    concurrency: 8,
    idleSeconds: 2,
    settleSeconds: 30,
    makeSeconds: 60,
    perWorldMs: { median: 30, p99: 90 },
    memory: {
      started: { open: 0, rssMiB: 80, rssAfterGcMiB: 79, heapUsedAfterGcMiB: 10 },
      allOpen: { open: 1000, rssMiB: 1080, rssAnonMiB: 1000, rssFileMiB: 80, rssAfterGcMiB: 1000, heapTotalAfterGcMiB: 500, heapUsedAfterGcMiB: 400 },
      restarted: { open: 0, rssMiB: 81, rssAfterGcMiB: 80, heapUsedAfterGcMiB: 10 },
      touchedPeakMiB: 500,
      idleClosed: { open: 0, rssMiB: 300, rssAfterGcMiB: 200, heapUsedAfterGcMiB: 20 },
      settled: { open: 0, rssMiB: 120, rssAnonMiB: 70, rssFileMiB: 50, rssAfterGcMiB: 110, heapTotalAfterGcMiB: 40, heapUsedAfterGcMiB: 18 },
    },
    perOpenWorldMiB: 1,
    idleCloseSeconds: 3.5,
    coldFirstMs: { median: 60, p90: 80 },
    warmMs: { median: 2 },
    coldOverWarm: 30,
    samples: 50,
  },
  isolation: {
    connections: 10,
    seconds: 10,
    rounds: 3,
    attackers: 4,
    rows: [
      { id: 'alone', what: 'reader alone', requestsPerSecond: 5000, p50Ms: 1, p99Ms: 4, non2xx: 0, p99Ratio: 1, p50Ratio: 1, runaway: null },
      { id: 'loop', what: 'while B loops', requestsPerSecond: 4000, p50Ms: 1.2, p99Ms: 8, non2xx: 0, p99Ratio: 2, p50Ratio: 1.2, runaway: { answers: 16, statuses: { 500: 16 }, medianMs: 2600 } },
      { id: 'native', what: 'while B loops natively', requestsPerSecond: 3000, p50Ms: 2, p99Ms: 20, non2xx: 3, p99Ratio: 5, p50Ratio: 2, cpu: { hostMain: 60, hostOther: 95, client: 40, hostMainUsPerRequest: 200 }, runaway: { answers: 12, statuses: { 500: 12 }, medianMs: 2800 } },
      { id: 'loop-niced', what: 'while B loops, niced', requestsPerSecond: 4500, p50Ms: 1, p99Ms: 20, non2xx: 0, p99Ratio: 5, p50Ratio: 1, diagnosis: true, runaway: { answers: 16, statuses: { 500: 16 }, medianMs: 2600 } },
    ],
  },
};

test('render: the multi-world host, its three tables and issue 31\'s targets from the same run', () => {
  const md = render({ suites: { host: hostFigures } });
  assert.match(md, /\| `bench\/small` \| 1000 \| 10\.00 \| 20\.00 \| 30\.00 \| 40\.00 \| 2\.00 \| 8\.00 \|/);
  assert.match(md, /branch \+ first read 1\.10×; the host's CPU for them 0\.95×\./);
  assert.match(md, /\| `bench\/big` \| 1000000 \| 11\.00 \|/);
  assert.match(md, /\| all 1000 open \(`--max-open` 2000\) \| 1000 \| 1080\.0 \| 1000\.0 \| 80\.0 \| 1000\.0 \| 500\.0 \| 400\.0 \|/);
  assert.match(md, /then idle ones closed \(3\.5 s after the last answer\) \| 0 \| 300\.0 \| – \| – \| 200\.0 \| – \| 20\.0 \|/); // figures a run did not record are dashes
  assert.match(md, /\| 30 s later, no request meanwhile \| 0 \| 120\.0 \| 70\.0 \| 50\.0 \| 110\.0 \| 40\.0 \| 18\.0 \|/);
  assert.match(md, /medians; load average 1\.00 → 2\.00\):/);
  assert.match(md, /over the rounds; load average 3\.50 → 4\.00\):/);
  assert.doesNotMatch(md, /SIGUSR2; load average/); // no load recorded for that part
  assert.match(md, /\| while B loops natively \(3 non-2xx\) \| 3000 \| 2\.00 \| 20\.00 \| 5\.00 \| 2\.00 \| 60 \| 200\.0 \| 95 \| 40 \| 12: 12 × 500, median 2800 ms \|/);
  assert.match(md, /\| while B loops \| 4000 \| 1\.20 \| 8\.00 \| 2\.00 \| 1\.20 \| – \| – \| – \| – \|/); // a row without CPU figures
  assert.match(md, /\| a branch and its first read at a 1M-entry parent ≤ 1\.2× at a 1k-entry one \| 1\.10× \(33\.00 vs 30\.00 ms\) \| met \|/);
  assert.match(md, /\| a closed world's first answer under 50 ms \(median\) \| 60\.00 ms \(p90 80\.00 ms\) \| \*\*not met\*\* \|/);
  assert.match(md, /\| reader's p99 ≤ 2× alone while world B runs away \(`loop`\) \| 2\.00× \| met \|/); // at the target is met
  assert.match(md, /\| reader's p99 ≤ 2× alone while world B runs away \(`native`\) \| 5\.00× \| \*\*not met\*\* \|/);
  assert.doesNotMatch(md, /runs away \(`alone`\)/);
  assert.match(md, /\| while B loops, niced \| 4500 \|/); // a diagnosis row is shown …
  assert.doesNotMatch(md, /runs away \(`loop-niced`\)/); // … but is not one of the targets
  // A part that did not run leaves no table and no target.
  const some = render({ suites: { host: { isolation: hostFigures.isolation } } });
  assert.doesNotMatch(some, /branch over HTTP|worlds\*\*|first answer under/);
  assert.match(some, /Issue 31's targets/);
  assert.doesNotMatch(render(latest), /Multi-world host|Issue 31/);
});

test('render: the edge variant, its four parts from the same run', () => {
  const spread = (median) => ({ median, p90: median * 2, min: median / 2, max: median * 3 });
  const edge = {
    load: { stripe: [5, 4] },
    stripe: {
      connections: 10,
      seconds: 5,
      rounds: 3,
      pinned: true,
      rows: [
        { request: 'hello', server: 'hello', what: 'workerd hello world', requestsPerSecond: 3500, p50Ms: 1.7, p90Ms: 3, p99Ms: 9, serverCpuUsPerRequest: 221, non2xx: 0 },
        { request: 'retrieve', server: 'edge', what: 'edge variant', requestsPerSecond: 1400, p50Ms: 5, p90Ms: 9, p99Ms: 30, serverCpuUsPerRequest: 640, non2xx: 2 },
      ],
      ratios: [{ request: 'retrieve', rps: 0.12, p50: 10, p99: 5.5, serverCpu: 12, rpsPerRound: [0.12], edgeOverHello: 0.4 }],
    },
    cold: { restarts: 10, restartMs: spread(800), firstMs: spread(45), otherFamilyMs: spread(15), warmMs: spread(3), ratio: { first: 15, otherFamily: 5 }, fresh: { samples: 20, postMs: spread(9), firstCreateMs: spread(9.5), secondCreateMs: spread(5), retrieveMs: spread(3), ratio: 1.9 } },
    path: { samples: 200, rows: [{ id: 'worker', what: 'the Worker alone', status: 401, medianMs: 1.9, p90Ms: 2.5 }], workerMs: 0.01, indexMs: 0.3, indexOverWarm: 0.11 },
    memory: { concurrency: 8, idle: 150, readings: [{ what: 'RSS_0', worlds: 0, rssMiB: 73.7, anonMiB: 35.7, perWorldKiB: null, anonPerWorldKiB: null }, { what: '500 made', worlds: 500, rssMiB: 384.3, anonMiB: 319.1, perWorldKiB: 636.1, anonPerWorldKiB: 580 }], probe: { worlds: 20, open: 0, firstMs: 20, warmMs: 3 } },
  };
  const md = render({ suites: { edge } });
  assert.match(md, /autocannon, 10 connections, 5 s × 3 rounds, servers on CPU 0 and autocannon on CPU 1;.*load average 5\.00 → 4\.00\):/);
  assert.match(md, /\| hello \| workerd hello world \| 3500 \| 1\.70 \| 3\.00 \| 9\.00 \| 221\.0 \|/);
  assert.match(md, /\| retrieve \| edge variant \(2 non-2xx\) \| 1400 \|/);
  assert.match(md, /Edge \/ single-world server, retrieve: 0\.12× the requests\/s, 10\.00× the p50, 5\.50× the p99, 12\.00× the server CPU per answer; 0\.40× the requests\/s of a workerd hello world\./);
  assert.match(md, /restart 800\.00 ms \(p90 1600\.00\); a world's first Stripe retrieve after it .* 45\.00 ms \(p90 90\.00\), 15\.00× warm/);
  assert.match(md, /its first request \(a create\) 9\.50 ms \(p90 19\.00\), 1\.90× the second\./);
  assert.match(md, /\| the Worker alone \| 401 \| 1\.900 \| 2\.500 \|/);
  assert.match(md, /\| 500 made \| 500 \| 384\.3 \| 319\.1 \| 636\.1 \| 580\.0 \|/);
  assert.match(md, /\| RSS_0 \| 0 \| 73\.7 \| 35\.7 \| – \| – \|/);
  assert.match(md, /After 150 s idle, 0 of 20 probed worlds still open/);
  assert.doesNotMatch(md, /NaN/);
  // A part that did not run leaves nothing.
  assert.doesNotMatch(render({ suites: { edge: { path: edge.path } } }), /Stripe over loopback|cold start|memory\*\*/);
  assert.doesNotMatch(render(latest), /Edge variant/);
});

test('render: browser access, both parts from the same run', () => {
  const access = {
    load: { http: [2, 3] },
    http: {
      connections: 10,
      seconds: 5,
      rounds: 3,
      pinned: false,
      rows: [
        { server: 'single', credential: 'token', what: 'the token | baseline', requestsPerSecond: 30000, p50Ms: 0.3, p99Ms: 1.2, serverCpuUsPerRequest: 33.3, ratio: { rps: 1, p50: 1, p99: 1, serverCpu: 1 }, rpsRatioPerRound: [1], bad: 0 },
        { server: 'host', credential: 'session', what: 'a session', requestsPerSecond: 27000, p50Ms: 0.33, p99Ms: 1.5, serverCpuUsPerRequest: 37, ratio: { rps: 0.9, p50: 1.1, p99: 1.25, serverCpu: 1.11 }, rpsRatioPerRound: [0.9], bad: 4 },
      ],
    },
    core: { timeMs: 500, rounds: 5, rows: [{ group: 'lookup', task: 'read-key', what: 'WorldAccess.grantOf(read key)', medianUs: 2.5, meanUs: 3, ratio: 2.27, extraUs: 1.4, samples: 9 }] },
  };
  const md = render({ suites: { access } });
  assert.match(md, /autocannon, 10 connections, 5 s × 3 rounds, unpinned;.*load average 2\.00 → 3\.00\):/);
  assert.match(md, /\| single \| the token \\\| baseline \| 30000 \| 1\.00 \| 0\.30 \| 1\.00 \| 1\.20 \| 1\.00 \| 33\.3 \| 1\.00 \|/);
  assert.match(md, /\| host \| a session \(4 non-200\) \| 27000 \| 0\.90 \| 0\.33 \| 1\.10 \| 1\.50 \| 1\.25 \| 37\.0 \| 1\.11 \|/);
  assert.match(md, /tinybench 500 ms per task × 5 rounds/);
  assert.match(md, /\| lookup \| WorldAccess\.grantOf\(read key\) \| 2\.500 \| 2\.27 \| 1\.400 \|/);
  assert.doesNotMatch(md, /NaN/);
  // A part that did not run leaves nothing.
  assert.doesNotMatch(render({ suites: { access: { core: access.core } } }), /the same read per credential/);
  assert.doesNotMatch(render(latest), /Browser access/);
});

test('render: roots, both parts from the same run', () => {
  const written = (fileBytes, logJsonBytes, entries, writes, markerWrites) => ({ fileBytes, allocatedBytes: fileBytes, entries, writes, markerWrites, logJsonBytes });
  const report = (reads, entries, w) => ({ ok: true, observedAt: 'x', durationMs: 1, reads, entries, written: w, deleted: 0 });
  const roots = {
    load: { refresh: [1, 2], request: [2, 2.5] },
    refresh: {
      customers: 10000,
      root: 'http://127.0.0.1:<port>/local/real/stripe',
      seedMs: 4867,
      first: { wallMs: 5003, report: report(107, 101, 50004), written: written(56844288, 28570924, 101, 100008, 50004), copyCpuMs: 4790, realCpuMs: 290 },
      unchanged: { wallMs: 2109, report: report(107, 0, 0), written: written(0, 0, 0, 0, 0), copyCpuMs: 1960, realCpuMs: 210 },
      throttled: { status: 429, code: 'refresh_throttled', retryAfterS: 28, wroteEntries: 0, fileBytes: 0 },
      baseline: { what: 'the same | customers', wallMs: 15946, written: written(40472576, 23263573, 10000, 50001, 0), serverCpuMs: 7220 },
      reads: { what: 'the walk', pages: 100, wallMs: 719, bytes: 1 },
      ratio: { wall: 0.314, cpu: 0.66, fileBytes: 1.405, logJsonBytes: 1.228, overReads: 6.96, unchangedOverFirst: 0.422 },
    },
    request: {
      customers: 10000,
      seconds: 3,
      rounds: 4,
      connections: 10,
      pinned: true,
      answerBytes: { rooted: 841, unrooted: 796 },
      rows: [{ kind: 'rooted', what: 'rooted GET', requestsPerSecond: 9000, p50Ms: 1, p99Ms: 2, serverCpuUsPerRequest: 70, ratio: { rps: 0.98, p50: 1.01, p99: 1.1, serverCpu: 1.02 }, rpsRatioPerRound: [0.98], bad: 2 }],
    },
  };
  const md = render({ suites: { roots } });
  assert.match(md, /holding 10000 customers\*\* .*rooted at `http:\/\/127\.0\.0\.1:<port>\/local\/real\/stripe`.*in 4\.87 s; load average 1\.00 → 2\.00\):/);
  assert.match(md, /\| first refresh \| 5003 \| 107 \| 101 \| 50004 \(\+ 50004\) \| 56\.84 \| 28\.57 \| 4790 \|/);
  assert.match(md, /\| baseline: the same \\\| customers \| 15946 \| – \| 10000 \| 50001 \| 40\.47 \| 23\.26 \| 7220 \|/);
  assert.match(md, /0\.31× its wall time, 0\.66× its server's CPU, 1\.41× its data file growth, 1\.23× its log JSON; 6\.96× the reads alone; the unchanged refresh 0\.42× the first\. A third refresh at once: 429 `refresh_throttled`, Retry-After 28 s, 0 entries written\./);
  assert.match(md, /3 s × 4 rounds, servers on CPU 0 and autocannon on CPU 1;.*load average 2\.00 → 2\.50; the answer 841 bytes rooted, 796 without\):/);
  assert.match(md, /\| rooted GET \(2 non-200\) \| 9000 \| 0\.98 \| 1\.00 \| 1\.01 \| 2\.00 \| 1\.10 \| 70\.0 \| 1\.02 \|/);
  assert.doesNotMatch(md, /NaN/);
  // A part that did not run leaves nothing.
  assert.doesNotMatch(render({ suites: { roots: { request: roots.request } } }), /a refresh of a Stripe root/);
  assert.doesNotMatch(render(latest), /Roots:/);
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

test('render: changesets, each phase per change against one create', () => {
  const phase = (name, wallMs, dev, main, real) => ({ phase: name, what: `the ${name} | call`, wallMs, cpuMs: { dev, main, real, total: dev + main + real }, mainFileBytes: 0, perChange: { wallMs: wallMs / 1000, cpuMs: (dev + main + real) / 1000 }, ratio: { wall: wallMs / 1000 / 12, cpu: (dev + main + real) / 1000 / 2 } });
  const changesets = {
    load: { flow: [11.43, 11.92] },
    flow: {
      changes: 1000,
      root: 'http://127.0.0.1:<port>/local/real/stripe',
      origin: 'http://127.0.0.1:<port>/local/main',
      create: { what: '1000 creates', wallMs: 12030, meanMs: 12.03, p50Ms: 7.674, p99Ms: 100.122, cpuMsPerCreate: 1.96, devFileBytes: 1 },
      changesetBytes: 3860000,
      phases: [phase('cut', 1828, 850, 0, 0), phase('deploy', 16383, 10, 3470, 2530)],
      total: { wallMs: 18211, cpuMs: 6860, ratio: { wall: 1.51, cpu: 3.5 } },
    },
  };
  const md = render({ suites: { changesets } });
  assert.match(md, /\*\*Changesets: 1000 changes cut, pushed, verified, approved and deployed\*\* .*dev's origin `http:\/\/127\.0\.0\.1:<port>\/local\/main`, main's root `http:\/\/127\.0\.0\.1:<port>\/local\/real\/stripe`; the changeset 3\.86 MB; load average 11\.43 → 11\.92\)\. .*mean 12\.030 ms \(p50 7\.674, p99 100\.122\), dev's CPU 1\.960 ms per create:/);
  assert.match(md, /\| deploy: the deploy \\\| call \| 16383 \| 10 \/ 3470 \/ 2530 \| 16\.383 \| 6\.010 \| 1\.37 \| 3\.00 \|/);
  assert.match(md, /\| all of it, cut to deploy \| 18211 \| 6860 \(all three\) \| 18\.211 \| 6\.860 \| 1\.51 \| 3\.50 \|/);
  assert.doesNotMatch(md, /NaN/);
  assert.doesNotMatch(render(latest), /Changesets:/);
});
