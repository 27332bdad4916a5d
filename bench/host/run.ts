/**
 * The multi-world host (issue 31), over HTTP on loopback, with the host (`kit host serve`) in a
 * child process of its own; from the compiled tree (`make bench` runs it as its `host` suite):
 *
 *   node dist/bench/host/run.js                        # branches, worlds, isolation
 *   node dist/bench/host/run.js worlds isolation       # a subset, in the order given
 *
 * - branches: a branch over HTTP, and its first read, at a small and a big parent (branches.ts)
 * - worlds: many worlds made through POST /-/worlds; RSS all open and once idle ones closed; a
 *   closed world's first answer against a warm one (many-worlds.ts)
 * - isolation: a reader's latency on one world alone and while another runs away (isolation.ts)
 *
 * Settings (environment; defaults are the sizes):
 *   KIT_BENCH_HOST_SMALL (1000) and KIT_BENCH_HOST_BIG (1000000): the parents' log entries;
 *   KIT_BENCH_HOST_BRANCHES (50): branches timed per parent;
 *   KIT_BENCH_HOST_WORLDS (1000), KIT_BENCH_HOST_CONCURRENCY (8), KIT_BENCH_HOST_IDLE (2, seconds),
 *   KIT_BENCH_HOST_COLD (50): closed worlds timed cold then warm; KIT_BENCH_HOST_SETTLE (30, seconds
 *   from the last world's closing to the last RSS reading);
 *   KIT_BENCH_HOST_SECONDS (8) per reader run, KIT_BENCH_HOST_ROUNDS (5),
 *   KIT_BENCH_HOST_CONNECTIONS (10) of the reader, KIT_BENCH_HOST_ATTACKERS (4),
 *   KIT_BENCH_HOST_RUNAWAYS (loop,native: which runaways world B runs; loop-niced, a diagnosis, is
 *   not in the default: isolation.ts);
 *   KIT_BENCH_HOST_DIR: where the hosts' temporary directories go (default the OS's);
 *   KIT_BENCH_HOST_KEEP=1 keeps them (to profile a host on the same state afterwards).
 * Writes its figures as JSON to BENCH_JSON when set (bench/results/json.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeBenchJson } from '../results/json.js';
import { benchBranches, type BranchFigures } from './branches.js';
import { benchIsolation, type IsolationFigures } from './isolation.js';
import { benchManyWorlds, type ManyWorldsFigures } from './many-worlds.js';

const PARTS = ['branches', 'worlds', 'isolation'] as const;
type Part = (typeof PARTS)[number];

/** A whole number of at least 1 from KIT_BENCH_HOST_<name>, or `fallback`; `fraction`: any number of at least 0.2. */
function setting(name: string, fallback: number, fraction = false): number {
  const raw = process.env[`KIT_BENCH_HOST_${name}`];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  const ok = fraction ? Number.isFinite(value) && value >= 0.2 : Number.isInteger(value) && value >= 1;
  if (!ok) throw new Error(`KIT_BENCH_HOST_${name} must be ${fraction ? 'a number of at least 0.2' : 'a whole number of at least 1'}, got ${raw}`);
  return value;
}

const log = (line: string): void => void process.stderr.write(`${line}\n`);
const fixed = (x: number | null, digits = 2): string => (x === null ? '–' : x.toFixed(digits));

function printBranches(f: BranchFigures): void {
  console.log(`\n### Branch over HTTP (${f.small.samples} per parent; ${f.customers} customers in each; the big log filled in ${fixed(f.fillSeconds, 1)} s, ${fixed(f.dataMiB, 0)} MiB on disk)\n`);
  console.log('| parent | entries | POST branches ms | first read ms | total ms | total p90 ms | second read ms | host CPU ms |\n|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const p of [f.small, f.big]) console.log(`| ${p.parent} | ${p.entries} | ${fixed(p.postMs)} | ${fixed(p.firstReadMs)} | ${fixed(p.totalMs)} | ${fixed(p.totalP90Ms)} | ${fixed(p.secondReadMs)} | ${fixed(p.hostCpuMs)} |`);
  console.log(`\nbig / small: POST ${fixed(f.ratio.post)}, first read ${fixed(f.ratio.firstRead)}, total ${fixed(f.ratio.total)} (target ≤ 1.2), host CPU ${fixed(f.ratio.hostCpu)}`);
}

function printWorlds(f: ManyWorldsFigures): void {
  const m = f.memory;
  console.log(`\n### ${f.worlds} worlds on one host (${f.concurrency} at a time)\n`);
  console.log(`made (POST /-/worlds, a Stripe create and a retrieve each): ${fixed(f.makeSeconds)} s; per world median ${fixed(f.perWorldMs.median)} ms, p99 ${fixed(f.perWorldMs.p99)} ms`);
  console.log('\n| host | worlds open | RSS MiB | anon MiB | file MiB | RSS after GC MiB | heap total after GC MiB | heap used after GC MiB |\n|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const [what, x] of [['started', m.started], ['all open', m.allOpen], [`restarted (--idle ${f.idleSeconds})`, m.restarted], ['idle ones closed', m.idleClosed], [`${f.settleSeconds} s later`, m.settled]] as const) {
    console.log(`| ${what} | ${x.open} | ${fixed(x.rssMiB, 1)} | ${fixed(x.rssAnonMiB, 1)} | ${fixed(x.rssFileMiB, 1)} | ${fixed(x.rssAfterGcMiB, 1)} | ${fixed(x.heapTotalAfterGcMiB, 1)} | ${fixed(x.heapUsedAfterGcMiB, 1)} |`);
  }
  console.log(`\nper open world ${fixed(f.perOpenWorldMiB, 3)} MiB; every world answered again in ${fixed(f.touchSeconds)} s (peak RSS ${fixed(m.touchedPeakMiB, 1)} MiB), all closed ${fixed(f.idleCloseSeconds, 1)} s after`);
  console.log(`closed world's first answer: median ${fixed(f.coldFirstMs.median)} ms, p90 ${fixed(f.coldFirstMs.p90)} ms (target < 50 ms); warm ${fixed(f.warmMs.median)} ms; cold / warm ${fixed(f.coldOverWarm)} (${f.samples} worlds)`);
}

function printIsolation(f: IsolationFigures): void {
  console.log(`\n### Isolation (reader: autocannon, ${f.connections} connections, ${f.seconds} s × ${f.rounds} rounds; ${f.attackers} clients on the runaway)\n`);
  console.log('| reader of world A | requests/s | p50 ms | p99 ms | p99 × alone | host main thread % | its µs per answer | host other threads % | clients % | world B answered |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const r of f.rows) {
    const b = r.runaway === null ? '' : `${r.runaway.answers} × ${JSON.stringify(r.runaway.statuses)}, median ${fixed(r.runaway.medianMs, 0)} ms`;
    console.log(`| ${r.what} | ${fixed(r.requestsPerSecond, 0)} | ${fixed(r.p50Ms)} | ${fixed(r.p99Ms)} | ${fixed(r.p99Ratio)} | ${fixed(r.cpu.hostMain, 0)} | ${fixed(r.cpu.hostMainUsPerRequest, 1)} | ${fixed(r.cpu.hostOther, 0)} | ${fixed(r.cpu.client, 0)} | ${b} |`);
  }
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((w) => !(PARTS as readonly string[]).includes(w));
  if (unknown.length > 0) throw new Error(`unknown part ${unknown.join(', ')}; choose from ${PARTS.join(', ')}`);
  const parts = (wanted.length === 0 ? PARTS : wanted) as readonly Part[];
  const parent = process.env['KIT_BENCH_HOST_DIR'] || tmpdir();
  const figures: {
    node: string;
    nproc: number;
    /** Each part's 1-minute load average before and after it (the machine is shared). */
    load: Partial<Record<Part, [number, number]>>;
    branches?: BranchFigures;
    worlds?: ManyWorldsFigures;
    isolation?: IsolationFigures;
  } = { node: process.version, nproc: availableParallelism(), load: {} };
  for (const part of parts) {
    const dir = mkdtempSync(join(parent, `kit-bench-host-${part}-`));
    const loadBefore = loadavg()[0] as number;
    try {
      if (part === 'branches') {
        figures.branches = await benchBranches({ dir, small: setting('SMALL', 1000), big: setting('BIG', 1_000_000), branches: setting('BRANCHES', 50) }, log);
        printBranches(figures.branches);
      } else if (part === 'worlds') {
        figures.worlds = await benchManyWorlds({ dir, worlds: setting('WORLDS', 1000), concurrency: setting('CONCURRENCY', 8), idleSeconds: setting('IDLE', 2), cold: setting('COLD', 50), settleSeconds: setting('SETTLE', 30) }, log);
        printWorlds(figures.worlds);
      } else {
        figures.isolation = await benchIsolation({ dir, seconds: setting('SECONDS', 8, true), rounds: setting('ROUNDS', 5), connections: setting('CONNECTIONS', 10), attackers: setting('ATTACKERS', 4), runaways: (process.env['KIT_BENCH_HOST_RUNAWAYS'] || 'loop,native').split(',') }, log);
        printIsolation(figures.isolation);
      }
      figures.load[part] = [Number(loadBefore.toFixed(2)), Number((loadavg()[0] as number).toFixed(2))];
      log(`bench host: ${part} done; load average ${loadBefore.toFixed(2)} before, ${(loadavg()[0] as number).toFixed(2)} after`);
    } finally {
      if (process.env['KIT_BENCH_HOST_KEEP'] === '1') log(`bench host: kept ${dir}`);
      else rmSync(dir, { recursive: true, force: true });
    }
  }
  writeBenchJson(figures);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
