/**
 * Browser access (issue 33, "Measure"): the cost of a session or named-key check per request
 * against the world token's, as ratios within one run; from the compiled tree (`make bench` runs
 * it as its `access` suite):
 *
 *   node dist/bench/access/run.js              # core, then http (about six minutes)
 *   node dist/bench/access/run.js core         # a subset, in the order given
 *
 * - core: the host core's judgement of a request's head, its dispatch and the lookup alone,
 *   in-process with tinybench, per credential (core.ts)
 * - http: the same read with each credential over loopback with autocannon, on the single-world
 *   server and on the multi-world host (http.ts)
 *
 * Settings (environment; defaults in parentheses):
 *   KIT_BENCH_ACCESS_TIME (500) ms per tinybench task, KIT_BENCH_ACCESS_CORE_ROUNDS (5);
 *   KIT_BENCH_ACCESS_SECONDS (3) per load run, KIT_BENCH_ACCESS_ROUNDS (6),
 *   KIT_BENCH_ACCESS_CONNECTIONS (10), KIT_BENCH_ACCESS_PIN (1: servers on CPU 0, the load on
 *   CPU 1; 0 leaves them unpinned);
 *   KIT_BENCH_ACCESS_DIR: where the temporary directories go (default the OS's).
 * Writes its figures as JSON to BENCH_JSON when set (bench/results/json.ts).
 */
import { fixed, log, runParts, settingsOf, type PartsFigures } from '../run-parts.js';
import { benchCore, type CoreFigures } from './core.js';
import { benchHttp, type HttpFigures } from './http.js';

const PARTS = ['core', 'http'] as const;
type Part = (typeof PARTS)[number];

const setting = settingsOf('ACCESS');

function printCore(f: CoreFigures): void {
  console.log(`\n### In-process: the core's head judgement, dispatch and lookup per credential (tinybench, ${f.timeMs} ms per task × ${f.rounds} rounds; medians over the rounds; ratios by median latency to each group's first task in the same round)\n`);
  console.log('| group | task | µs per call (median) | µs (mean) | × baseline | µs above baseline |\n|---|---|---:|---:|---:|---:|');
  for (const r of f.rows) console.log(`| ${r.group} | ${r.what} | ${fixed(r.medianUs, 3)} | ${fixed(r.meanUs, 3)} | ${fixed(r.ratio)} | ${fixed(r.extraUs, 3)} |`);
}

function printHttp(f: HttpFigures): void {
  console.log(`\n### Over loopback: the same read per credential (autocannon, ${f.connections} connections, ${f.seconds} s × ${f.rounds} rounds${f.pinned ? '; servers on CPU 0, autocannon on CPU 1' : ', unpinned'}; medians; ratios to the token's row of the same server and round)\n`);
  console.log(`reads: single ${f.read.single}; host ${f.read.host}\n`);
  console.log('| server | credential | requests/s | × token | p50 ms | × token | p99 ms | × token | server CPU µs/answer | × token | requests/s × token per round |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const r of f.rows) {
    console.log(
      `| ${r.server} | ${r.what}${r.bad > 0 ? ` (${r.bad} non-200/errors)` : ''} | ${fixed(r.requestsPerSecond, 0)} | ${fixed(r.ratio.rps, 3)} | ${fixed(r.p50Ms)} | ${fixed(r.ratio.p50)} | ${fixed(r.p99Ms)} | ${fixed(r.ratio.p99)} | ${fixed(r.serverCpuUsPerRequest, 1)} | ${fixed(r.ratio.serverCpu)} | ${r.rpsRatioPerRound.map((x) => fixed(x, 3)).join(', ')} |`,
    );
  }
}

function main(): Promise<void> {
  return runParts<Part, PartsFigures<Part> & { core?: CoreFigures; http?: HttpFigures }>('ACCESS', PARTS, {}, async (part, dir, figures) => {
    if (part === 'core') {
      figures.core = await benchCore({ dir, timeMs: setting('TIME', 500), rounds: setting('CORE_ROUNDS', 5) }, log);
      printCore(figures.core);
    } else {
      figures.http = await benchHttp({ dir, seconds: setting('SECONDS', 3, { fraction: true }), rounds: setting('ROUNDS', 6), connections: setting('CONNECTIONS', 10), pin: setting('PIN', 1, { min: 0 }) !== 0 }, log);
      printHttp(figures.http);
    }
  });
}

main().then(
  // autocannon's agents may keep the loop alive a while: done is done.
  () => process.exit(process.exitCode ?? 0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
