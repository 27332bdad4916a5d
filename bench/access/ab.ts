/**
 * Not part of the bench: an A/B of the credential checks between this built tree and another
 * (a git worktree with a change to host/core/access/, say), in one run, so that every ratio
 * compares the two under the same machine load:
 *
 * - core: in one process, the single-world core of each tree (core.ts's set-up, each tree's own
 *   modules) — `handler.head` and the lookup alone per credential, tinybench, rounds rotated;
 * - http: the single-world server of each tree (its own `dist/bench/http/server.js world`, as
 *   `kit world serve`), autocannon; each credential on both trees back to back, rounds rotated.
 *
 *   git worktree add --detach /tmp/other HEAD && cd /tmp/other && git apply <change>.patch \
 *     && ln -s /work/main/node_modules && npx tsc -p tsconfig.json && npx tsc -p tsconfig.sandbox.json
 *   node dist/bench/access/ab.js /tmp/other            # core, then http (about six minutes)
 *   node dist/bench/access/ab.js /tmp/other core
 *
 * The other tree needs dist/bench/edge/servers.js (every tree since issue 32). Settings:
 * KIT_BENCH_ACCESS_AB_ROUNDS (core 5, http 10), KIT_BENCH_ACCESS_AB_TIME (300 ms per task),
 * KIT_BENCH_ACCESS_AB_SECONDS (3 per load run). Prints its tables; writes nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import { ALL_CPUS, pin, type SingleWorld } from '../edge/servers.js';
import { median, round } from '../host/client.js';
import { setUpCore, treeModules, type CoreUnderBench } from './core.js';
import type { CredentialKind } from './credentials.js';
import { load, singleTarget, type Run, type Target } from './http.js';

const TREES = ['this', 'other'] as const;
type Tree = (typeof TREES)[number];
/** The rows compared (the write key costs as the read key does). */
const KINDS: readonly CredentialKind[] = ['token', 'token-origin', 'read-key', 'session', 'read-key-session'];

const other = process.argv[2] === undefined ? undefined : resolve(process.argv[2]);
const parts = process.argv.slice(3);
const setting = (name: string, fallback: number): number => {
  const raw = process.env[`KIT_BENCH_ACCESS_AB_${name}`];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`KIT_BENCH_ACCESS_AB_${name} must be a positive number, got ${raw}`);
  return value;
};
const log = (line: string): void => void process.stderr.write(`${line}\n`);
const fixed = (x: number | null, digits = 2): string => (x === null ? '–' : x.toFixed(digits));
const rotated = <T>(xs: readonly T[], by: number): T[] => [...xs.slice(by % xs.length), ...xs.slice(0, by % xs.length)];

async function abCore(root: string, scratch: string): Promise<void> {
  const rounds = setting('ROUNDS', 5);
  const time = setting('TIME', 300);
  const sets: Record<Tree, CoreUnderBench> = {
    this: await setUpCore(mkdtempSync(join(scratch, 'core-this-'))),
    other: await setUpCore(mkdtempSync(join(scratch, 'core-other-')), await treeModules(root)),
  };
  try {
    const tasks: [string, () => unknown][] = [];
    for (const tree of TREES) {
      const s = sets[tree];
      for (const kind of KINDS) {
        tasks.push([`${tree}/head/${kind}`, () => {
          if (typeof s.core.handler.head(s.head(kind)) !== 'function') throw new Error(`${tree}: the head with ${kind} was refused`);
        }]);
      }
      const lookups: Partial<Record<CredentialKind, () => unknown>> = {
        token: () => s.access.grantOf(s.world.token, Date.now()),
        'read-key': () => s.access.grantOf(s.keyOf('read-key'), Date.now()),
        session: () => s.access.session(s.sessionIdOf('session'), Date.now()),
        'read-key-session': () => s.access.session(s.sessionIdOf('read-key-session'), Date.now()),
      };
      for (const [kind, call] of Object.entries(lookups)) {
        tasks.push([`${tree}/lookup/${kind}`, () => {
          if (call() === null) throw new Error(`${tree}: the lookup of ${kind} found nothing`);
        }]);
      }
    }
    const medians = new Map<string, number[]>();
    for (let r = 0; r < rounds; r++) {
      const bench = new Bench({ time, warmupTime: Math.max(10, Math.round(time / 5)) });
      for (const [name, fn] of rotated(tasks, r * 7)) bench.add(name, fn);
      await bench.run();
      for (const t of bench.tasks) {
        const res = t.result;
        if (!('latency' in res)) throw new Error(`tinybench has no result for ${t.name}${'error' in res ? `: ${String(res.error)}` : ''}`);
        medians.set(t.name, [...(medians.get(t.name) ?? []), res.latency.p50 * 1000]);
      }
      log(`bench access ab: core round ${r + 1}/${rounds}`);
    }
    console.log(`\n### In-process (tinybench, ${time} ms per task × ${rounds} rounds; median µs per call, medians over the rounds; ratios by round)\n`);
    console.log('| task | this tree µs | × its token | other tree µs | × its token | other / this |\n|---|---:|---:|---:|---:|---:|');
    const names = [...new Set(tasks.map(([n]) => n.slice(n.indexOf('/') + 1)))];
    for (const name of names) {
      const group = name.split('/')[0]!;
      const x = (tree: Tree): number[] => medians.get(`${tree}/${name}`)!;
      const token = (tree: Tree): number[] => medians.get(`${tree}/${group}/token`)!;
      const perRound = (a: number[], b: number[]): number => median(a.map((v, i) => v / b[i]!));
      console.log(`| ${name} | ${fixed(median(x('this')), 3)} | ${fixed(perRound(x('this'), token('this')))} | ${fixed(median(x('other')), 3)} | ${fixed(perRound(x('other'), token('other')))} | ${fixed(perRound(x('other'), x('this')))} |`);
    }
  } finally {
    for (const s of Object.values(sets)) await s.storage.close();
  }
}

async function abHttp(root: string, scratch: string): Promise<void> {
  const rounds = setting('ROUNDS', 10);
  const seconds = setting('SECONDS', 3);
  const servers = {
    this: await import('../edge/servers.js'),
    other: (await import(pathToFileURL(join(root, 'dist', 'bench', 'edge', 'servers.js')).href)) as typeof import('../edge/servers.js'),
  };
  const started: SingleWorld[] = [];
  let pinned = false;
  try {
    const targets = {} as Record<Tree, Target>;
    for (const tree of TREES) {
      const single = await servers[tree].startSingleWorld(mkdtempSync(join(scratch, `http-${tree}-`)));
      started.push(single);
      targets[tree] = await singleTarget(single);
    }
    if (availableParallelism() >= 2) pinned = started.every((s) => pin(s.pid, '0')) && pin(process.pid, '1');
    for (const tree of TREES) for (const kind of KINDS) await load(targets[tree], kind, 1, 10);
    const runs = new Map<string, Run[]>();
    for (let r = 0; r < rounds; r++) {
      // Each credential on both trees back to back, so that the pair sees the same machine.
      for (const kind of rotated(KINDS, r)) {
        for (const tree of r % 2 === 0 ? TREES : [...TREES].reverse()) {
          const run = await load(targets[tree], kind, seconds, 10);
          runs.set(`${tree}/${kind}`, [...(runs.get(`${tree}/${kind}`) ?? []), run]);
        }
      }
      log(`bench access ab: http round ${r + 1}/${rounds}; load average ${loadavg()[0]?.toFixed(2)}`);
    }
    console.log(`\n### The single-world server of each tree over loopback (autocannon, 10 connections, ${seconds} s × ${rounds} rounds${pinned ? '; servers on CPU 0, autocannon on CPU 1' : ', unpinned'}; medians, ratios by round)\n`);
    console.log('| tree | credential | requests/s | × its token | p50 ms | p99 ms | server CPU µs/answer | × its token | × this tree |\n|---|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const tree of TREES) {
      for (const kind of KINDS) {
        const xs = runs.get(`${tree}/${kind}`)!;
        const token = runs.get(`${tree}/token`)!;
        const mine = runs.get(`this/${kind}`)!;
        const m = (pick: (x: Run) => number): number => median(xs.map(pick));
        const by = (base: Run[], pick: (x: Run) => number): number | null => round(median(xs.map((x, i) => pick(x) / pick(base[i]!))), 3);
        console.log(
          `| ${tree} | ${kind}${xs.some((x) => x.bad > 0) ? ' (non-200 answers)' : ''} | ${fixed(m((x) => x.rps), 0)} | ${fixed(by(token, (x) => x.rps), 3)} | ${fixed(m((x) => x.p50Ms))} | ${fixed(m((x) => x.p99Ms))} | ${fixed(m((x) => x.serverCpuUs), 1)} | ${fixed(by(token, (x) => x.serverCpuUs))} | ${fixed(by(mine, (x) => x.serverCpuUs))} |`,
        );
      }
    }
  } finally {
    if (pinned) pin(process.pid, ALL_CPUS);
    for (const s of started) await s.stop();
  }
}

if (other === undefined || parts.some((p) => p !== 'core' && p !== 'http')) {
  console.error('usage: ab.js <other tree root> [core] [http]');
  process.exit(2);
}
const scratch = mkdtempSync(join(tmpdir(), 'kit-bench-access-ab-'));
try {
  console.log(`this tree: ${fileURLToPath(new URL('../../..', import.meta.url))}; other tree: ${other}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  if (parts.length === 0 || parts.includes('core')) await abCore(other, scratch);
  if (parts.length === 0 || parts.includes('http')) await abHttp(other, scratch);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(0);
