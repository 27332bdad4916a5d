/**
 * Roots (issue 34, "Measure"): a refresh of a Stripe root holding n customers, and what a root
 * adds to a twin's request, as ratios within one run; from the compiled tree (`make bench` runs
 * it as its `roots` suite):
 *
 *   node dist/bench/roots/run.js              # refresh, then request (two or three minutes)
 *   node dist/bench/roots/run.js request      # a subset, in the order given
 *
 * - refresh: the first refresh of a copy of an account of n customers, an unchanged one, the
 *   throttle, against creating the same customers through the Stripe API (refresh.ts)
 * - request: a rooted twin's GET against the same world unrooted, and the twin status against
 *   the clock, over loopback with autocannon (request.ts)
 *
 * Both parts use the same two worlds (worlds.ts): the request part reads the copy the refresh
 * part made, or makes one when run alone.
 *
 * Settings (environment; defaults in parentheses):
 *   KIT_BENCH_ROOTS_CUSTOMERS (10000) in the real account;
 *   KIT_BENCH_ROOTS_SECONDS (3) per load run, KIT_BENCH_ROOTS_WARMUP (1) seconds of load per
 *   row first (0: none), KIT_BENCH_ROOTS_ROUNDS (6),
 *   KIT_BENCH_ROOTS_CONNECTIONS (10), KIT_BENCH_ROOTS_PIN (1: servers on CPU 0, the load on
 *   CPU 1; 0 leaves them unpinned);
 *   KIT_BENCH_ROOTS_DIR: where the temporary directories go (default the OS's).
 * Writes its figures as JSON to BENCH_JSON when set (bench/results/json.ts).
 */
import { tmpdir } from 'node:os';
import { fixed, log, runParts, settingsOf, type PartsFigures } from '../run-parts.js';
import { benchRefresh, type RefreshFigures, type RefreshRun } from './refresh.js';
import { benchRequest, type RequestFigures } from './request.js';
import { Worlds } from './worlds.js';

const PARTS = ['refresh', 'request'] as const;
type Part = (typeof PARTS)[number];

const setting = settingsOf('ROOTS');
const MB = (bytes: number): string => (bytes / 1e6).toFixed(2);

function printRefresh(f: RefreshFigures): void {
  console.log(`\n### A refresh of a Stripe root holding ${f.customers} customers (root ${f.root}; the real account seeded in ${fixed(f.seedMs / 1000)} s in-process)\n`);
  console.log('| what | wall ms | reads | entries | records written (+ markers) | data file growth MB | log JSON MB | copy CPU ms | real CPU ms |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  const row = (what: string, r: RefreshRun): string =>
    `| ${what} | ${fixed(r.wallMs, 0)} | ${r.report.reads} | ${r.written.entries} | ${r.report.written} (+ ${r.written.markerWrites}) | ${MB(r.written.fileBytes)} | ${MB(r.written.logJsonBytes)} | ${r.copyCpuMs} | ${r.realCpuMs} |`;
  console.log(row('first refresh', f.first));
  console.log(row('second, nothing changed (`?force=1`)', f.unchanged));
  const b = f.baseline;
  console.log(`| baseline: ${b.what} | ${fixed(b.wallMs, 0)} | – | ${b.written.entries} | ${b.written.writes} | ${MB(b.written.fileBytes)} | ${MB(b.written.logJsonBytes)} | ${b.serverCpuMs} | – |`);
  console.log(`| reads alone: ${f.reads.what} | ${fixed(f.reads.wallMs, 0)} | ${f.reads.pages} | – | – | – | – | – | – |`);
  console.log(`\nFirst refresh × the baseline: wall ${fixed(f.ratio.wall, 3)}, server CPU ${fixed(f.ratio.cpu, 3)}, data file ${fixed(f.ratio.fileBytes, 3)}, log JSON ${fixed(f.ratio.logJsonBytes, 3)}; × the reads alone ${fixed(f.ratio.overReads)}; the unchanged refresh × the first ${fixed(f.ratio.unchangedOverFirst, 3)}.`);
  console.log(`A third refresh at once: ${f.throttled.status} ${f.throttled.code}, Retry-After ${f.throttled.retryAfterS} s, ${f.throttled.wroteEntries} entries and ${f.throttled.fileBytes} bytes written.`);
}

function printRequest(f: RequestFigures): void {
  console.log(`\n### What a root adds to a request (autocannon, ${f.connections} connections, ${f.seconds} s × ${f.rounds} rounds${f.pinned ? '; servers on CPU 0, autocannon on CPU 1' : ', unpinned'}; medians; ratios within each round)\n`);
  console.log(`The answer: ${f.answerBytes.rooted} bytes rooted, ${f.answerBytes.unrooted} without (\`${f.observedAtHeader}\`); rooting again took ${f.rerootMs.map((x) => fixed(x, 0)).join(', ')} ms.\n`);
  console.log('| row | requests/s | × baseline | p50 ms | × | p99 ms | × | server CPU µs/answer | × | requests/s × baseline per round |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const r of f.rows) {
    console.log(
      `| ${r.what}${r.bad > 0 ? ` (${r.bad} non-200/errors)` : ''} | ${fixed(r.requestsPerSecond, 0)} | ${fixed(r.ratio.rps, 3)} | ${fixed(r.p50Ms)} | ${fixed(r.ratio.p50)} | ${fixed(r.p99Ms)} | ${fixed(r.ratio.p99)} | ${fixed(r.serverCpuUsPerRequest, 1)} | ${fixed(r.ratio.serverCpu)} | ${r.rpsRatioPerRound.map((x) => fixed(x, 3)).join(', ')} |`,
    );
  }
}

async function main(): Promise<void> {
  const worlds = new Worlds(process.env['KIT_BENCH_ROOTS_DIR'] || tmpdir(), setting('CUSTOMERS', 10_000), log);
  try {
    await runParts<Part, PartsFigures<Part> & { refresh?: RefreshFigures; request?: RequestFigures }>('ROOTS', PARTS, {}, async (part, _dir, figures) => {
      if (part === 'refresh') {
        figures.refresh = await benchRefresh(worlds, log);
        printRefresh(figures.refresh);
      } else {
        figures.request = await benchRequest(
          { seconds: setting('SECONDS', 3, { fraction: true }), warmUp: setting('WARMUP', 1, { min: 0 }), rounds: setting('ROUNDS', 6), connections: setting('CONNECTIONS', 10), pin: setting('PIN', 1, { min: 0 }) !== 0 },
          worlds,
          log,
        );
        printRequest(figures.request);
      }
    });
  } finally {
    await worlds.close();
  }
}

main().then(
  // autocannon's agents may keep the loop alive a while: done is done.
  () => process.exit(process.exitCode ?? 0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
