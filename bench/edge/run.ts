/**
 * The edge variant (issue 32) over HTTP on loopback, locally: the built Worker in workerd through
 * miniflare (`startEdgeDev`, what `kit edge dev` runs), in this process's child workerd; from the
 * compiled tree with the Worker built (`make build`; `make bench` runs it as its `edge` suite):
 *
 *   node dist/bench/edge/run.js                  # stripe, cold, path, memory (about eight minutes)
 *   node dist/bench/edge/run.js cold path        # a subset, in the order given
 *
 * - stripe: Stripe retrieve and create, the edge against the single-world server (stripe.ts)
 * - cold: a Durable Object's cold start after a restart, and a fresh family's first request (cold.ts)
 * - path: what the Worker and the index add to a request (path.ts)
 * - memory: workerd's RSS with 0 and many worlds, then once idle (memory.ts)
 *
 * Settings (environment; defaults in parentheses):
 *   KIT_BENCH_EDGE_SECONDS (5) per load run, KIT_BENCH_EDGE_ROUNDS (3), KIT_BENCH_EDGE_CONNECTIONS (10),
 *   KIT_BENCH_EDGE_PIN (1: servers on CPU 0, the load on CPU 1; 0 leaves them unpinned);
 *   KIT_BENCH_EDGE_RESTARTS (10) cold starts, KIT_BENCH_EDGE_FRESH (20) fresh families,
 *   KIT_BENCH_EDGE_WARM (5) warm requests per restart;
 *   KIT_BENCH_EDGE_SAMPLES (200) requests of each kind in path;
 *   KIT_BENCH_EDGE_WORLDS (100,500): the memory steps; KIT_BENCH_EDGE_CONCURRENCY (8);
 *   KIT_BENCH_EDGE_IDLE (240) seconds idle after the last step, read every KIT_BENCH_EDGE_EVERY (20);
 *   KIT_BENCH_EDGE_PROBE (20) worlds asked after the idle wait;
 *   KIT_BENCH_EDGE_DIR: where the temporary directories go (default the OS's).
 * Writes its figures as JSON to BENCH_JSON when set (bench/results/json.ts).
 */
import { fixed, log, runParts, settingsOf, type PartsFigures } from '../run-parts.js';
import { benchCold, type ColdFigures, type Spread } from './cold.js';
import { benchMemory, type MemoryFigures } from './memory.js';
import { benchPath, type PathFigures } from './path.js';
import { benchStripe, type StripeFigures } from './stripe.js';

const PARTS = ['stripe', 'cold', 'path', 'memory'] as const;
type Part = (typeof PARTS)[number];

const setting = settingsOf('EDGE');

function steps(): number[] {
  const raw = process.env['KIT_BENCH_EDGE_WORLDS'] || '100,500';
  const xs = raw.split(',').map(Number);
  if (xs.some((x) => !Number.isInteger(x) || x < 1) || xs.some((x, i) => i > 0 && x <= xs[i - 1]!)) throw new Error(`KIT_BENCH_EDGE_WORLDS must be ascending whole numbers of at least 1, got ${raw}`);
  return xs;
}

const ms = (s: Spread): string => `${fixed(s.median)} (p90 ${fixed(s.p90)})`;

function printStripe(f: StripeFigures): void {
  console.log(`\n### Stripe over loopback: edge vs single-world server (autocannon, ${f.connections} connections, ${f.seconds} s × ${f.rounds} rounds${f.pinned ? '; servers on CPU 0, autocannon on CPU 1' : ', unpinned'})\n`);
  console.log('| request | server | requests/s | p50 ms | p90 ms | p99 ms | server CPU µs/answer | autocannon CPU % |\n|---|---|---:|---:|---:|---:|---:|---:|');
  for (const r of f.rows) console.log(`| ${r.request} | ${r.what}${r.non2xx > 0 ? ` (${r.non2xx} non-2xx/errors)` : ''} | ${fixed(r.requestsPerSecond, 0)} | ${fixed(r.p50Ms)} | ${fixed(r.p90Ms)} | ${fixed(r.p99Ms)} | ${fixed(r.serverCpuUsPerRequest, 1)} | ${fixed(r.clientCpu, 0)} |`);
  console.log('\n| request | edge / single: requests/s | p50 | p99 | server CPU per answer | requests/s per round | edge / workerd hello: requests/s |\n|---|---:|---:|---:|---:|---|---:|');
  for (const r of f.ratios) console.log(`| ${r.request} | ${fixed(r.rps, 3)} | ${fixed(r.p50)} | ${fixed(r.p99)} | ${fixed(r.serverCpu)} | ${r.rpsPerRound.map((x) => fixed(x, 3)).join(', ')} | ${fixed(r.edgeOverHello, 3)} |`);
}

function printCold(f: ColdFigures): void {
  console.log(`\n### Cold start (${f.restarts} restarts over persisted state; medians, p90)\n`);
  console.log(`restart (EdgeDev.restart(): workerd stopped and started): ${ms(f.restartMs)} ms`);
  console.log(`world A's first retrieve after it (index + family object + world): ${ms(f.firstMs)} ms; ${fixed(f.ratio.first, 1)}× warm`);
  console.log(`world B's first retrieve next (its family object + world; index warm): ${ms(f.otherFamilyMs)} ms; ${fixed(f.ratio.otherFamily, 1)}× warm`);
  console.log(`A warm: ${ms(f.warmMs)} ms`);
  const x = f.fresh;
  console.log(`\nfresh families (${x.samples}): POST /-/worlds ${ms(x.postMs)} ms; first create ${ms(x.firstCreateMs)} ms, second ${ms(x.secondCreateMs)} ms (${fixed(x.ratio)}×); retrieve ${ms(x.retrieveMs)} ms`);
}

function printPath(f: PathFigures): void {
  console.log(`\n### Through the Worker (${f.samples} of each, one at a time, interleaved)\n`);
  console.log('| request | status | median ms | p90 ms |\n|---|---:|---:|---:|');
  for (const r of f.rows) console.log(`| ${r.what} | ${r.status} | ${fixed(r.medianMs, 3)} | ${fixed(r.p90Ms, 3)} |`);
  console.log(`\nthe Worker above the floor ${fixed(f.workerMs, 3)} ms; the index's round trip ${fixed(f.indexMs, 3)} ms (${fixed(f.indexOverWarm)}× a warm retrieve); a warm retrieve past the Worker ${fixed(f.pastWorkerMs, 3)} ms`);
}

function printMemory(f: MemoryFigures): void {
  console.log(`\n### Memory: workerd's RSS (${f.steps.join(', ')} worlds, each its own family, touched once; ${f.concurrency} at a time)\n`);
  console.log(`made: ${f.make.map((m) => `${m.worlds} in ${fixed(m.seconds, 1)} s (median ${fixed(m.perWorldMs, 1)} ms per world)`).join('; ')}\n`);
  console.log('| reading | worlds | RSS MiB | anon MiB | file MiB | peak MiB | KiB per world (RSS) | KiB per world (anon) |\n|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of f.readings) console.log(`| ${r.what} | ${r.worlds} | ${fixed(r.rssMiB, 1)} | ${fixed(r.anonMiB, 1)} | ${fixed(r.fileMiB, 1)} | ${fixed(r.peakMiB, 1)} | ${fixed(r.perWorldKiB, 1)} | ${fixed(r.anonPerWorldKiB, 1)} |`);
  const p = f.probe;
  console.log(`\nafter ${f.idle} s idle: ${p.open} of ${p.worlds} probed worlds still open; their first retrieve ${fixed(p.firstMs)} ms, the next ${fixed(p.warmMs)} ms (${fixed(p.ratio, 1)}×)`);
}

function main(): Promise<void> {
  type Figures = PartsFigures<Part> & { stripe?: StripeFigures; cold?: ColdFigures; path?: PathFigures; memory?: MemoryFigures };
  return runParts<Part, Figures>('EDGE', PARTS, {}, async (part, dir, figures) => {
    if (part === 'stripe') {
      figures.stripe = await benchStripe({ dir, seconds: setting('SECONDS', 5, { fraction: true }), rounds: setting('ROUNDS', 3), connections: setting('CONNECTIONS', 10), pin: setting('PIN', 1, { min: 0 }) !== 0 }, log);
      printStripe(figures.stripe);
    } else if (part === 'cold') {
      figures.cold = await benchCold({ dir, restarts: setting('RESTARTS', 10), fresh: setting('FRESH', 20), warm: setting('WARM', 5) }, log);
      printCold(figures.cold);
    } else if (part === 'path') {
      figures.path = await benchPath({ samples: setting('SAMPLES', 200) }, log);
      printPath(figures.path);
    } else {
      figures.memory = await benchMemory({ steps: steps(), concurrency: setting('CONCURRENCY', 8), idle: setting('IDLE', 240), sampleEvery: setting('EVERY', 20), probe: setting('PROBE', 20) }, log);
      printMemory(figures.memory);
    }
  });
}

main().then(
  // miniflare's exit hooks and autocannon's agents may keep the loop alive a while: done is done.
  () => process.exit(process.exitCode ?? 0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
