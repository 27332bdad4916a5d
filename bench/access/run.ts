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
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeBenchJson } from '../results/json.js';
import { benchCore, type CoreFigures } from './core.js';
import { benchHttp, type HttpFigures } from './http.js';

const PARTS = ['core', 'http'] as const;
type Part = (typeof PARTS)[number];

/** A whole number of at least `min` from KIT_BENCH_ACCESS_<name>, or `fallback`; `fraction`: any number of at least 0.2. */
function setting(name: string, fallback: number, { fraction = false, min = 1 } = {}): number {
  const raw = process.env[`KIT_BENCH_ACCESS_${name}`];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  const ok = fraction ? Number.isFinite(value) && value >= 0.2 : Number.isInteger(value) && value >= min;
  if (!ok) throw new Error(`KIT_BENCH_ACCESS_${name} must be ${fraction ? 'a number of at least 0.2' : `a whole number of at least ${min}`}, got ${raw}`);
  return value;
}

const log = (line: string): void => void process.stderr.write(`${line}\n`);
const fixed = (x: number | null | undefined, digits = 2): string => (x === null || x === undefined ? '–' : x.toFixed(digits));

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

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((w) => !(PARTS as readonly string[]).includes(w));
  if (unknown.length > 0) throw new Error(`unknown part ${unknown.join(', ')}; choose from ${PARTS.join(', ')}`);
  const parts = (wanted.length === 0 ? PARTS : wanted) as readonly Part[];
  const parent = process.env['KIT_BENCH_ACCESS_DIR'] || tmpdir();
  const figures: {
    node: string;
    nproc: number;
    /** Each part's 1-minute load average before and after it (the machine is shared). */
    load: Partial<Record<Part, [number, number]>>;
    core?: CoreFigures;
    http?: HttpFigures;
  } = { node: process.version, nproc: availableParallelism(), load: {} };
  for (const part of parts) {
    const dir = mkdtempSync(join(parent, `kit-bench-access-${part}-`));
    const loadBefore = loadavg()[0] as number;
    try {
      if (part === 'core') {
        figures.core = await benchCore({ dir, timeMs: setting('TIME', 500), rounds: setting('CORE_ROUNDS', 5) }, log);
        printCore(figures.core);
      } else {
        figures.http = await benchHttp({ dir, seconds: setting('SECONDS', 3, { fraction: true }), rounds: setting('ROUNDS', 6), connections: setting('CONNECTIONS', 10), pin: setting('PIN', 1, { min: 0 }) !== 0 }, log);
        printHttp(figures.http);
      }
      figures.load[part] = [Number(loadBefore.toFixed(2)), Number((loadavg()[0] as number).toFixed(2))];
      log(`bench access: ${part} done; load average ${loadBefore.toFixed(2)} before, ${(loadavg()[0] as number).toFixed(2)} after`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  writeBenchJson(figures);
}

main().then(
  // autocannon's agents may keep the loop alive a while: done is done.
  () => process.exit(process.exitCode ?? 0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
