// bench/results/latest.json → the markdown section of bench/README.md between the markers below.
// `make bench` runs it after writing latest.json; it can be run alone:
//
//   node bench/results/render.mjs bench/results/latest.json bench/README.md   # rewrites the section
//   node bench/results/render.mjs bench/results/latest.json                    # prints it
//
// Plain functions, no clock or file access in render() and splice(): render.test.mjs checks them.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const START = '<!-- bench:latest:start -->';
export const END = '<!-- bench:latest:end -->';

// twinkit's Stripe rows (the default: `kit world serve` as it serves a world) and emulate's, request by request.
const PEER_PAIRS = [
  ['retrieve a customer', 'stripe-get', 'emulate-get'],
  ['create a customer', 'stripe-post', 'emulate-post'],
  ['list ten customers', 'stripe-list', 'emulate-list'],
];

// Each default row and its before row: the same request to the world in a worker thread (the previous default).
const BEFORE_PAIRS = [
  ['retrieve', 'stripe-get', 'stripe-get-worker'],
  ['create', 'stripe-post', 'stripe-post-worker'],
  ['list', 'stripe-list', 'stripe-list-worker'],
];

const fixed = (x, digits) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(digits) : '–');
const ratio = (x) => (typeof x === 'number' && Number.isFinite(x) ? (x >= 0.095 ? x.toFixed(2) : x.toFixed(3)) : '–');
const cell = (s) => String(s).replaceAll('|', '\\|');

function machineLine(latest) {
  const m = latest.machine ?? {};
  const c = latest.commit ?? {};
  const gib = typeof m.memoryBytes === 'number' ? `${(m.memoryBytes / 2 ** 30).toFixed(1)} GiB` : '? GiB';
  const load = (l) => (Array.isArray(l) ? l.map((x) => fixed(x, 2)).join(' ') : '?');
  return [
    `Commit \`${c.short ?? '?'}\`${c.dirty ? ' (with uncommitted changes)' : ''}, ${latest.date ?? '?'}.`,
    `Machine: ${m.nproc ?? '?'} CPUs (${m.cpuModel ?? '?'}), ${gib}, Node ${m.node ?? '?'}, ${m.kernel ?? ''};`,
    `load average ${load(m.loadBefore)} before, ${load(m.loadAfter)} after.`,
  ].join(' ');
}

function httpSection(http) {
  const s = http.settings ?? {};
  const out = [
    `**HTTP** (\`bench/http/run.sh\`: wrk, ${s.connections ?? '?'} connections, ${s.threads ?? '?'} thread, ${s.duration ?? '?'} per row, ${s.rounds ?? '?'} round(s); server on CPU ${s.serverCpu ?? '?'}, wrk on CPU ${s.clientCpu ?? '?'}; medians over the rounds, each ratio taken against the baseline of its own round${http.loadAverage ? `; load average ${fixed(http.loadAverage.min, 2)}–${fixed(http.loadAverage.max, 2)} during the rows` : ''}):`,
    '',
    '| row | server | requests/s | × uWS hello | × node:http hello | server CPU µs/request | CPU × uWS hello | p50 ms | p99 ms |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of http.rows ?? []) {
    const errors = r.non2xx > 0 ? ` (${r.non2xx} non-2xx)` : '';
    out.push(
      `| \`${r.id}\` | ${cell(r.name)}${errors} | ${fixed(r.rps, 0)} | ${ratio(r.ratioToUws)} | ${ratio(r.ratioToNodeHttp)} | ${fixed(r.cpuUsPerRequest, 1)} | ${fixed(r.cpuRatioToUws, 1)} | ${fixed(r.p50Ms, 2)} | ${fixed(r.p99Ms, 2)} |`,
    );
  }
  const byId = new Map((http.rows ?? []).map((r) => [r.id, r]));
  const pairs = PEER_PAIRS.filter(([, t, e]) => byId.has(t) && byId.has(e));
  if (pairs.length > 0) {
    out.push(
      '',
      'twinkit\'s Stripe twin against emulate 0.12.2 (same requests, same run; twinkit\'s create is durable, emulate keeps state in memory):',
      '',
      '| request | twinkit requests/s | emulate requests/s | twinkit / emulate (requests/s) | twinkit / emulate (CPU per request) | twinkit p99 ms | emulate p99 ms |',
      '|---|---:|---:|---:|---:|---:|---:|',
    );
    for (const [what, t, e] of pairs) {
      const a = byId.get(t);
      const b = byId.get(e);
      out.push(
        `| ${what} | ${fixed(a.rps, 0)} | ${fixed(b.rps, 0)} | ${ratio(a.rps / b.rps)} | ${ratio(a.cpuUsPerRequest / b.cpuUsPerRequest)} | ${fixed(a.p99Ms, 2)} | ${fixed(b.p99Ms, 2)} |`,
      );
    }
  }
  const befores = BEFORE_PAIRS.filter(([, d, w]) => byId.has(d) && byId.has(w));
  if (befores.length > 0) {
    const parts = befores.map(([what, d, w]) => {
      const a = byId.get(d);
      const b = byId.get(w);
      return `${what} (\`${d}\` / \`${w}\`) ${ratio(a.rps / b.rps)}× the requests/s, p99 ${fixed(a.p99Ms, 2)} vs ${fixed(b.p99Ms, 2)} ms`;
    });
    out.push('', `The default against the previous default (the world in a worker thread of its own), same run: ${parts.join('; ')}.`);
  }
  out.push(...targetsTable(byId));
  return out;
}

// Issue 30's targets, each against the figures of this run: the default rows (the world as
// `kit world serve` serves it) against the uWS hello world, emulate and the durable-write floor.
function targetsTable(byId) {
  const get = byId.get('stripe-get');
  const post = byId.get('stripe-post');
  const list = byId.get('stripe-list');
  const eget = byId.get('emulate-get');
  const epost = byId.get('emulate-post');
  const elist = byId.get('emulate-list');
  const floor = byId.get('uws-durable');
  const num = (x) => typeof x === 'number' && Number.isFinite(x);
  const checks = [];
  const add = (what, measured, met) => checks.push(`| ${what} | ${measured} | ${met === undefined ? '–' : met ? 'met' : '**not met**'} |`);
  const times = (x, target) => [`${ratio(x)}×`, num(x) ? x >= target : undefined];
  const p99 = (a, b) => [`${fixed(a.p99Ms, 2)} vs ${fixed(b.p99Ms, 2)} ms`, num(a.p99Ms) && num(b.p99Ms) ? a.p99Ms < b.p99Ms : undefined];
  if (get) add('retrieve ≥ 0.25× the uWS hello world', ...times(get.ratioToUws, 0.25));
  if (get && eget) add('retrieve ≥ 3× emulate', ...times(get.rps / eget.rps, 3));
  if (post && epost) add('create ≥ 1.3× emulate', ...times(post.rps / epost.rps, 1.3));
  if (get && eget) add('p99 below emulate\'s on retrieve', ...p99(get, eget));
  if (list && elist) add('p99 below emulate\'s on list', ...p99(list, elist));
  if (post && epost) add('p99 below emulate\'s on create', ...p99(post, epost));
  if (post && floor) add('create ≥ 0.30× the durable-write floor\'s requests/s', ...times(post.rps / floor.rps, 0.3));
  if (checks.length === 0) return [];
  const out = ['', "Issue 30's targets in this run (`stripe-get`, `stripe-post`, `stripe-list`: the world as `kit world serve` serves it by default):", '', '| target | measured | |', '|---|---|---|', ...checks];
  if (post && floor) {
    out.push(
      '',
      `The durable-write floor (\`uws-durable\`: the same create, durable the same way, with none of twinkit) ran at ${ratio(floor.ratioToUws)}× the uWS hello world; the Stripe create at ${ratio(post.rps / floor.rps)}× the floor's requests/s, ${ratio(post.cpuUsPerRequest / floor.cpuUsPerRequest)}× its CPU per request.`,
    );
  }
  return out;
}

// The multi-world host (issue 31, bench/host/): branches at two parent sizes, many worlds on one
// host, isolation between worlds; then the issue's targets against the figures of this run.
function hostSection(host) {
  const out = [];
  const mib = (x) => fixed(x, 1);
  const load = (part) => (Array.isArray(host.load?.[part]) ? `; load average ${host.load[part].map((x) => fixed(x, 2)).join(' → ')}` : '');
  const b = host.branches;
  if (b) {
    out.push(
      '',
      `**Multi-world host: a branch over HTTP** (\`bench/host/branches.ts\`: \`POST {world_api}/branches\`, then the branch's first read, a Stripe list of ten customers; ${b.small?.samples ?? '?'} branches per parent, alternating; both parents hold the same ${b.customers ?? '?'} customers, the big one's log lengthened through the engine in ${fixed(b.fillSeconds, 0)} s; medians${load('branches')}):`,
      '',
      '| parent | log entries | POST branches ms | first read ms | branch + first read ms | p90 ms | second read ms | host CPU ms for the branch + first read |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const p of [b.small, b.big].filter(Boolean)) {
      out.push(`| \`${cell(p.parent)}\` | ${p.entries} | ${fixed(p.postMs, 2)} | ${fixed(p.firstReadMs, 2)} | ${fixed(p.totalMs, 2)} | ${fixed(p.totalP90Ms, 2)} | ${fixed(p.secondReadMs, 2)} | ${fixed(p.hostCpuMs, 2)} |`);
    }
    const r = b.ratio ?? {};
    out.push('', `Big / small: POST ${ratio(r.post)}×, first read ${ratio(r.firstRead)}×, branch + first read ${ratio(r.total)}×; the host's CPU for them ${ratio(r.hostCpu)}×.`);
  }
  const w = host.worlds;
  if (w) {
    const m = w.memory ?? {};
    out.push(
      '',
      `**Multi-world host: ${w.worlds} worlds** (\`bench/host/many-worlds.ts\`: each made with \`POST /-/worlds\`, then a Stripe create and a retrieve, ${w.concurrency} at a time; the host in a child process, RSS from \`/proc\`, a collection forced through SIGUSR2${load('worlds')}): made in ${fixed(w.makeSeconds, 1)} s (per world: median ${fixed(w.perWorldMs?.median, 1)} ms, p99 ${fixed(w.perWorldMs?.p99, 1)} ms).`,
      '',
      '| host | worlds open | RSS MiB | of which anonymous | of which file-backed | RSS after GC MiB | heap total after GC MiB | heap used after GC MiB |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
    );
    const rows = [
      ['started, no world open', m.started],
      [`all ${w.worlds} open (\`--max-open\` ${2 * w.worlds})`, m.allOpen],
      [`started again with \`--idle ${w.idleSeconds}\``, m.restarted],
      [`every world answered again, then idle ones closed (${fixed(w.idleCloseSeconds, 1)} s after the last answer)`, m.idleClosed],
      [`${w.settleSeconds ?? '?'} s later, no request meanwhile`, m.settled],
    ];
    for (const [what, x] of rows) {
      if (x) out.push(`| ${what} | ${x.open} | ${mib(x.rssMiB)} | ${mib(x.rssAnonMiB)} | ${mib(x.rssFileMiB)} | ${mib(x.rssAfterGcMiB)} | ${mib(x.heapTotalAfterGcMiB)} | ${mib(x.heapUsedAfterGcMiB)} |`);
    }
    out.push(
      '',
      `RSS per open world ${fixed(w.perOpenWorldMiB, 2)} MiB; peak RSS while every world answered again ${mib(m.touchedPeakMiB)} MiB. A closed world's first answer (a Stripe retrieve; ${w.samples} worlds, one at a time): median ${fixed(w.coldFirstMs?.median, 2)} ms, p90 ${fixed(w.coldFirstMs?.p90, 2)} ms; warm (the next answer) ${fixed(w.warmMs?.median, 2)} ms; cold ${ratio(w.coldOverWarm)}× warm.`,
    );
  }
  const iso = host.isolation;
  if (iso) {
    out.push(
      '',
      `**Multi-world host: isolation** (\`bench/host/isolation.ts\`: a reader of world A, autocannon with ${iso.connections} connections retrieving a Stripe customer, ${iso.seconds} s × ${iso.rounds} rounds; world B's Stripe twin under a scenario \`js\` handler that never returns, ${iso.attackers} clients sending it requests back to back; \`--budget off\`; ratios against the alone run of the same round, medians over the rounds${load('isolation')}):`,
      '',
      "| reader of world A | requests/s | p50 ms | p99 ms | p99 × alone | p50 × alone | host main thread, % of a core | its CPU µs per reader answer | host's other threads, % | the bench's clients, % | world B's answers |",
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    );
    for (const r of iso.rows ?? []) {
      const answered = r.runaway ? `${r.runaway.answers}: ${Object.entries(r.runaway.statuses ?? {}).map(([s, n]) => `${n} × ${s}`).join(', ')}, median ${fixed(r.runaway.medianMs, 0)} ms` : '';
      const errors = r.non2xx > 0 ? ` (${r.non2xx} non-2xx)` : '';
      const cpu = r.cpu ?? {};
      out.push(
        `| ${cell(r.what)}${errors} | ${fixed(r.requestsPerSecond, 0)} | ${fixed(r.p50Ms, 2)} | ${fixed(r.p99Ms, 2)} | ${ratio(r.p99Ratio)} | ${ratio(r.p50Ratio)} | ${fixed(cpu.hostMain, 0)} | ${fixed(cpu.hostMainUsPerRequest, 1)} | ${fixed(cpu.hostOther, 0)} | ${fixed(cpu.client, 0)} | ${cell(answered)} |`,
      );
    }
  }
  const checks = [];
  const add = (what, measured, met) => checks.push(`| ${what} | ${measured} | ${met === undefined ? '–' : met ? 'met' : '**not met**'} |`);
  const num = (x) => typeof x === 'number' && Number.isFinite(x);
  if (b) add('a branch and its first read at a 1M-entry parent ≤ 1.2× at a 1k-entry one', `${ratio(b.ratio?.total)}× (${fixed(b.big?.totalMs, 2)} vs ${fixed(b.small?.totalMs, 2)} ms)`, num(b.ratio?.total) ? b.ratio.total <= 1.2 : undefined);
  if (w) add("a closed world's first answer under 50 ms (median)", `${fixed(w.coldFirstMs?.median, 2)} ms (p90 ${fixed(w.coldFirstMs?.p90, 2)} ms)`, num(w.coldFirstMs?.median) ? w.coldFirstMs.median < 50 : undefined);
  for (const r of (iso?.rows ?? []).filter((x) => x.id !== 'alone' && x.diagnosis !== true)) {
    add(`reader's p99 ≤ 2× alone while world B runs away (\`${cell(r.id)}\`)`, `${ratio(r.p99Ratio)}×`, num(r.p99Ratio) ? r.p99Ratio <= 2 : undefined);
  }
  if (checks.length > 0) out.push('', "Issue 31's targets in this run:", '', '| target | measured | |', '|---|---|---|', ...checks);
  return out;
}

// The edge variant (issue 32, bench/edge/): Stripe against the single-world server, cold starts,
// the Worker's path, workerd's memory per idle world.
function edgeSection(edge) {
  const out = [];
  const load = (part) => (Array.isArray(edge.load?.[part]) ? `; load average ${edge.load[part].map((x) => fixed(x, 2)).join(' → ')}` : '');
  const spread = (x) => `${fixed(x?.median, 2)} ms (p90 ${fixed(x?.p90, 2)})`;
  const st = edge.stripe;
  if (st) {
    out.push(
      '',
      `**Edge variant: Stripe over loopback** (\`bench/edge/stripe.ts\`: autocannon, ${st.connections ?? '?'} connections, ${st.seconds ?? '?'} s × ${st.rounds ?? '?'} rounds${st.pinned ? ', servers on CPU 0 and autocannon on CPU 1' : ', unpinned'}; the edge as \`kit edge dev\` runs it, one world made with \`POST /-/worlds\`; the single-world server as \`kit world serve\`; medians over the rounds${load('stripe')}):`,
      '',
      '| request | server | requests/s | p50 ms | p90 ms | p99 ms | server CPU µs/answer |',
      '|---|---|---:|---:|---:|---:|---:|',
    );
    for (const r of st.rows ?? []) {
      const errors = r.non2xx > 0 ? ` (${r.non2xx} non-2xx)` : '';
      out.push(`| ${cell(r.request)} | ${cell(r.what)}${errors} | ${fixed(r.requestsPerSecond, 0)} | ${fixed(r.p50Ms, 2)} | ${fixed(r.p90Ms, 2)} | ${fixed(r.p99Ms, 2)} | ${fixed(r.serverCpuUsPerRequest, 1)} |`);
    }
    out.push('', ...(st.ratios ?? []).map((r) => `Edge / single-world server, ${r.request}: ${ratio(r.rps)}× the requests/s, ${ratio(r.p50)}× the p50, ${ratio(r.p99)}× the p99, ${ratio(r.serverCpu)}× the server CPU per answer; ${ratio(r.edgeOverHello)}× the requests/s of a workerd hello world.`));
  }
  const c = edge.cold;
  if (c) {
    const f = c.fresh ?? {};
    out.push(
      '',
      `**Edge variant: cold start** (\`bench/edge/cold.ts\`: ${c.restarts ?? '?'} restarts of workerd over persisted state, medians${load('cold')}): restart ${spread(c.restartMs)}; a world's first Stripe retrieve after it (index, family object and world started) ${spread(c.firstMs)}, ${ratio(c.ratio?.first)}× warm; another family's first next ${spread(c.otherFamilyMs)}, ${ratio(c.ratio?.otherFamily)}× warm; warm ${spread(c.warmMs)}. A fresh family (${f.samples ?? '?'}): \`POST /-/worlds\` ${spread(f.postMs)}; its first request (a create) ${spread(f.firstCreateMs)}, ${ratio(f.ratio)}× the second.`,
    );
  }
  const p = edge.path;
  if (p) {
    out.push('', `**Edge variant: through the Worker** (\`bench/edge/path.ts\`: ${p.samples ?? '?'} of each, one at a time, interleaved${load('path')}):`, '', '| request | status | median ms | p90 ms |', '|---|---:|---:|---:|');
    for (const r of p.rows ?? []) out.push(`| ${cell(r.what)} | ${r.status} | ${fixed(r.medianMs, 3)} | ${fixed(r.p90Ms, 3)} |`);
    out.push('', `The Worker above the floor ${fixed(p.workerMs, 3)} ms; the index's round trip ${fixed(p.indexMs, 3)} ms (${ratio(p.indexOverWarm)}× a warm retrieve).`);
  }
  const m = edge.memory;
  if (m) {
    out.push(
      '',
      `**Edge variant: memory** (\`bench/edge/memory.ts\`: workerd's RSS from \`/proc\`; bare worlds, each its own family object, touched once, ${m.concurrency ?? '?'} at a time${load('memory')}):`,
      '',
      '| reading | worlds | RSS MiB | anon MiB | KiB per world (RSS) | KiB per world (anon) |',
      '|---|---:|---:|---:|---:|---:|',
    );
    for (const r of m.readings ?? []) out.push(`| ${cell(r.what)} | ${r.worlds} | ${fixed(r.rssMiB, 1)} | ${fixed(r.anonMiB, 1)} | ${fixed(r.perWorldKiB, 1)} | ${fixed(r.anonPerWorldKiB, 1)} |`);
    const q = m.probe ?? {};
    out.push('', `After ${m.idle ?? '?'} s idle, ${q.open ?? '?'} of ${q.worlds ?? '?'} probed worlds still open; their first retrieve ${fixed(q.firstMs, 2)} ms, the next ${fixed(q.warmMs, 2)} ms.`);
  }
  return out;
}

// Browser access (issue 33, bench/access/): the same read with each credential over loopback on
// both Node hosts, and the core's head judgement and lookup in-process; ratios to the token's.
function accessSection(access) {
  const out = [];
  const load = (part) => (Array.isArray(access.load?.[part]) ? `; load average ${access.load[part].map((x) => fixed(x, 2)).join(' → ')}` : '');
  const h = access.http;
  if (h) {
    out.push(
      '',
      `**Browser access: the same read per credential** (\`bench/access/http.ts\`: \`GET {world_url}/hello/v1/greetings/<id>\`, autocannon, ${h.connections ?? '?'} connections, ${h.seconds ?? '?'} s × ${h.rounds ?? '?'} rounds${h.pinned ? ', servers on CPU 0 and autocannon on CPU 1' : ', unpinned'}; medians over the rounds, each ratio against the token's row of the same server and round${load('http')}):`,
      '',
      '| server | credential | requests/s | × token | p50 ms | × token | p99 ms | × token | server CPU µs/answer | × token |',
      '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const r of h.rows ?? []) {
      const bad = r.bad > 0 ? ` (${r.bad} non-200)` : '';
      const x = r.ratio ?? {};
      out.push(`| ${cell(r.server)} | ${cell(r.what)}${bad} | ${fixed(r.requestsPerSecond, 0)} | ${ratio(x.rps)} | ${fixed(r.p50Ms, 2)} | ${ratio(x.p50)} | ${fixed(r.p99Ms, 2)} | ${ratio(x.p99)} | ${fixed(r.serverCpuUsPerRequest, 1)} | ${ratio(x.serverCpu)} |`);
    }
  }
  const c = access.core;
  if (c) {
    out.push(
      '',
      `**Browser access: the check in-process** (\`bench/access/core.ts\`: the single-world core, its access in LMDB, tinybench ${c.timeMs ?? '?'} ms per task × ${c.rounds ?? '?'} rounds; medians over the rounds, each ratio by median latency against its group's first task in the same round${load('core')}):`,
      '',
      '| group | task | µs per call (median) | × baseline | µs above baseline |',
      '|---|---|---:|---:|---:|',
    );
    for (const r of c.rows ?? []) out.push(`| ${cell(r.group)} | ${cell(r.what)} | ${fixed(r.medianUs, 3)} | ${ratio(r.ratio)} | ${fixed(r.extraUs, 3)} |`);
  }
  return out;
}

// Roots (issue 34, bench/roots/): a refresh of a Stripe root holding n customers against creating
// them through the API, and what a root adds to a request; ratios within the run.
function rootsSection(roots) {
  const out = [];
  const load = (part) => (Array.isArray(roots.load?.[part]) ? `; load average ${roots.load[part].map((x) => fixed(x, 2)).join(' → ')}` : '');
  const mb = (x) => (typeof x === 'number' && Number.isFinite(x) ? (x / 1e6).toFixed(2) : '–');
  const f = roots.refresh;
  if (f) {
    out.push(
      '',
      `**Roots: a refresh of a Stripe root holding ${f.customers ?? '?'} customers** (\`bench/roots/refresh.ts\`: the real account and the copy each served as \`kit world serve\` serves it, the copy's Stripe twin rooted at \`${f.root ?? '?'}\` with the real world's token sealed, through the Node outbound fetch; the real account seeded in-process in ${fixed((f.seedMs ?? NaN) / 1000, 2)} s${load('refresh')}):`,
      '',
      '| what | wall ms | reads | entries | records written (+ markers) | data file growth MB | log JSON MB | copy CPU ms |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
    );
    const run = (what, r) => `| ${what} | ${fixed(r?.wallMs, 0)} | ${r?.report?.reads ?? '–'} | ${r?.written?.entries ?? '–'} | ${r?.report?.written ?? '–'} (+ ${r?.written?.markerWrites ?? '–'}) | ${mb(r?.written?.fileBytes)} | ${mb(r?.written?.logJsonBytes)} | ${fixed(r?.copyCpuMs, 0)} |`;
    out.push(run('first refresh', f.first), run('second, nothing changed (`?force=1`)', f.unchanged));
    const b = f.baseline;
    if (b) out.push(`| baseline: ${cell(b.what)} | ${fixed(b.wallMs, 0)} | – | ${b.written?.entries ?? '–'} | ${b.written?.writes ?? '–'} | ${mb(b.written?.fileBytes)} | ${mb(b.written?.logJsonBytes)} | ${fixed(b.serverCpuMs, 0)} |`);
    if (f.reads) out.push(`| reads alone: ${cell(f.reads.what)} | ${fixed(f.reads.wallMs, 0)} | ${f.reads.pages ?? '–'} | – | – | – | – | – |`);
    const x = f.ratio ?? {};
    const t = f.throttled ?? {};
    out.push(
      '',
      `The first refresh against the baseline: ${ratio(x.wall)}× its wall time, ${ratio(x.cpu)}× its server's CPU, ${ratio(x.fileBytes)}× its data file growth, ${ratio(x.logJsonBytes)}× its log JSON; ${ratio(x.overReads)}× the reads alone; the unchanged refresh ${ratio(x.unchangedOverFirst)}× the first. A third refresh at once: ${t.status ?? '?'} \`${t.code ?? '?'}\`, Retry-After ${t.retryAfterS ?? '?'} s, ${t.wroteEntries ?? '?'} entries written.`,
    );
  }
  const q = roots.request;
  if (q) {
    out.push(
      '',
      `**Roots: what a root adds to a request** (\`bench/roots/request.ts\`: the copy of ${q.customers ?? '?'} customers, autocannon, ${q.connections ?? '?'} connections, ${q.seconds ?? '?'} s × ${q.rounds ?? '?'} rounds${q.pinned ? ', servers on CPU 0 and autocannon on CPU 1' : ', unpinned'}; medians over the rounds, each ratio within its round against the row marked baseline${load('request')}; the answer ${q.answerBytes?.rooted ?? '?'} bytes rooted, ${q.answerBytes?.unrooted ?? '?'} without):`,
      '',
      '| request | requests/s | × baseline | p50 ms | × baseline | p99 ms | × baseline | server CPU µs/answer | × baseline |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const r of q.rows ?? []) {
      const bad = r.bad > 0 ? ` (${r.bad} non-200)` : '';
      const x = r.ratio ?? {};
      out.push(`| ${cell(r.what)}${bad} | ${fixed(r.requestsPerSecond, 0)} | ${ratio(x.rps)} | ${fixed(r.p50Ms, 2)} | ${ratio(x.p50)} | ${fixed(r.p99Ms, 2)} | ${ratio(x.p99)} | ${fixed(r.serverCpuUsPerRequest, 1)} | ${ratio(x.serverCpu)} |`);
    }
  }
  return out;
}

// Changesets (issue 35, bench/changesets/): n changes cut, pushed to the origin, verified,
// approved and deployed to a root that is another world, per change against one create.
function changesetsSection(changesets) {
  const f = changesets.flow;
  if (!f) return [];
  const load = Array.isArray(changesets.load?.flow) ? `; load average ${changesets.load.flow.map((x) => fixed(x, 2)).join(' → ')}` : '';
  const c = f.create ?? {};
  const out = [
    '',
    `**Changesets: ${f.changes ?? '?'} changes cut, pushed, verified, approved and deployed** (\`bench/changesets/flow.ts\`: three worlds each served as \`kit world serve\` serves it, dev's origin \`${f.origin ?? '?'}\`, main's root \`${f.root ?? '?'}\`; the changeset ${fixed((f.changesetBytes ?? NaN) / 1e6, 2)} MB${load}). One vendor request, the baseline: ${cell(c.what ?? '?')}, mean ${fixed(c.meanMs, 3)} ms (p50 ${fixed(c.p50Ms, 3)}, p99 ${fixed(c.p99Ms, 3)}), dev's CPU ${fixed(c.cpuMsPerCreate, 3)} ms per create:`,
    '',
    '| phase | wall ms | CPU ms: dev / main / real | per change: wall ms | CPU ms | × one create: wall | CPU |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const p of f.phases ?? []) {
    out.push(`| ${cell(p.phase)}: ${cell(p.what)} | ${fixed(p.wallMs, 0)} | ${p.cpuMs?.dev ?? '–'} / ${p.cpuMs?.main ?? '–'} / ${p.cpuMs?.real ?? '–'} | ${fixed(p.perChange?.wallMs, 3)} | ${fixed(p.perChange?.cpuMs, 3)} | ${ratio(p.ratio?.wall)} | ${ratio(p.ratio?.cpu)} |`);
  }
  const t = f.total;
  if (t) out.push(`| all of it, cut to deploy | ${fixed(t.wallMs, 0)} | ${t.cpuMs ?? '–'} (all three) | ${fixed(t.wallMs / f.changes, 3)} | ${fixed(t.cpuMs / f.changes, 3)} | ${ratio(t.ratio?.wall)} | ${ratio(t.ratio?.cpu)} |`);
  return out;
}

// The other benches, as compact tables of what they print.
const SUITES = {
  engine: {
    title: '**Engine** (`bench/engine/run.ts`; lowest median per operation over the rounds, ratio to each group\'s first task)',
    head: ['group', 'task', 'µs per op', 'ratio'],
    text: 2,
    row: (r) => [r.group, r.task, fixed(r.meanUs, 2), fixed(r.perOp, 2)],
  },
  sandbox: {
    title: '**Sandbox** (`bench/sandbox/run.ts`)',
    head: ['task', 'value', 'ratio'],
    text: 3,
    row: (r) => [r.task, r.value, r.ratio],
  },
  router: {
    title: '**Router** (`bench/router/run.ts`)',
    head: ['task', 'µs per request', '× naive regex scan'],
    row: (r) => [r.task, fixed(r.usPerRequest, 3), fixed(r.ratioToNaive, 3)],
  },
  runner: {
    title: '**Whole engine in-process** (`bench/runner/run.ts`)',
    head: ['task', 'µs per request (median)', '× node:vm call (mean)', 'CPU µs per request'],
    row: (r) => [r.task, fixed(r.usMedian, 2), fixed(r.ratioToVm, 1), fixed(r.cpuUs, 1)],
  },
  'lived-in': {
    title: '**A lived-in Stripe account** (`bench/runner/lived-in.ts`: n of each object first; one request at a time, in-process; reads against retrieving a customer, writes against creating one, in the same world; a request that reads only what it needs keeps its ratio as n grows)',
    head: ['request', 'n', 'CPU µs per request', '× its baseline', 'baseline'],
    row: (r) => [r.request, r.n, fixed(r.cpuUs, 1), fixed(r.ratio, 2), r.baseline],
  },
};

/** The section's markdown (without the markers). */
export function render(latest) {
  const out = [
    '## Latest `make bench`',
    '',
    '<!-- Generated by bench/results/render.mjs from bench/results/latest.json; `make bench` rewrites it. -->',
    '',
    machineLine(latest),
  ];
  if (Array.isArray(latest.failed) && latest.failed.length > 0) out.push('', `Failed: ${latest.failed.join(', ')}.`);
  const suites = latest.suites ?? {};
  if (suites.http) out.push('', ...httpSection(suites.http));
  for (const [name, spec] of Object.entries(SUITES)) {
    const rows = suites[name]?.rows;
    if (!Array.isArray(rows) || rows.length === 0) continue;
    // The first `text` columns (default 1) are left-aligned words, the rest right-aligned figures.
    const align = spec.head.map((_, i) => (i < (spec.text ?? 1) ? '---' : '---:'));
    out.push('', `${spec.title}:`, '', `| ${spec.head.join(' | ')} |`, `|${align.join('|')}|`);
    for (const r of rows) out.push(`| ${spec.row(r).map(cell).join(' | ')} |`);
  }
  if (suites.host) out.push(...hostSection(suites.host));
  if (suites.edge) out.push(...edgeSection(suites.edge));
  if (suites.access) out.push(...accessSection(suites.access));
  if (suites.roots) out.push(...rootsSection(suites.roots));
  if (suites.changesets) out.push(...changesetsSection(suites.changesets));
  return out.join('\n');
}

/** The README with the text between the markers replaced by `section`. */
export function splice(readme, section) {
  const a = readme.indexOf(START);
  const b = readme.indexOf(END);
  if (a < 0 || b < a) throw new Error(`the README has no ${START} … ${END} section`);
  return `${readme.slice(0, a + START.length)}\n${section}\n${readme.slice(b)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [json, readme] = process.argv.slice(2);
  if (json === undefined) {
    console.error('usage: render.mjs <latest.json> [README.md]');
    process.exit(2);
  }
  const section = render(JSON.parse(readFileSync(json, 'utf8')));
  if (readme === undefined) console.log(section);
  else writeFileSync(readme, splice(readFileSync(readme, 'utf8'), section));
}
