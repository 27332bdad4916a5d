/**
 * Changesets (issue 35, "Measure"): n changes cut, pushed to the origin, verified with one check,
 * approved and deployed to a root that is another world, each phase's cost per change against one
 * vendor request (a Stripe customer create) in the same run (flow.ts). From the compiled tree
 * (`make bench` runs it as its `changesets` suite):
 *
 *   node dist/bench/run.js changesets          # as `make bench` runs it
 *   node dist/bench/changesets/run.js          # the same, its table on stdout
 *
 * Settings (environment; defaults in parentheses):
 *   KIT_BENCH_CHANGESETS_CHANGES (1000): customers created in dev, one change each;
 *   KIT_BENCH_CHANGESETS_DIR: where the temporary directories go (default the OS's).
 * Writes its figures as JSON to BENCH_JSON when set (bench/results/json.ts).
 */
import { fixed, log, runParts, settingsOf, type PartsFigures } from '../run-parts.js';
import { benchChangesets, type ChangesetFigures } from './flow.js';

const PARTS = ['flow'] as const;
type Part = (typeof PARTS)[number];

const setting = settingsOf('CHANGESETS');
const MB = (bytes: number): string => (bytes / 1e6).toFixed(2);

function print(f: ChangesetFigures): void {
  const c = f.create;
  console.log(`\n### ${f.changes} changes through a changeset (dev's origin ${f.origin}; main's root ${f.root}; the changeset ${MB(f.changesetBytes)} MB as answered)\n`);
  console.log(`Baseline, one vendor request: ${c.what}: ${fixed(c.wallMs, 0)} ms in all, mean ${fixed(c.meanMs, 3)} ms (p50 ${fixed(c.p50Ms, 3)}, p99 ${fixed(c.p99Ms, 3)}), dev's CPU ${fixed(c.cpuMsPerCreate, 3)} ms per create.\n`);
  console.log('| phase | wall ms | CPU ms: dev / main / real | main data file growth MB | per change: wall ms | CPU ms | × one create: wall | CPU |\n|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const p of f.phases) {
    console.log(`| ${p.phase}: ${p.what} | ${fixed(p.wallMs, 0)} | ${p.cpuMs.dev} / ${p.cpuMs.main} / ${p.cpuMs.real} | ${MB(p.mainFileBytes)} | ${fixed(p.perChange.wallMs, 3)} | ${fixed(p.perChange.cpuMs, 3)} | ${fixed(p.ratio.wall)} | ${fixed(p.ratio.cpu)} |`);
  }
  console.log(`| all of it, cut to deploy | ${fixed(f.total.wallMs, 0)} | ${f.total.cpuMs} (all three) | – | ${fixed(f.total.wallMs / f.changes, 3)} | ${fixed(f.total.cpuMs / f.changes, 3)} | ${fixed(f.total.ratio.wall)} | ${fixed(f.total.ratio.cpu)} |`);
}

async function main(): Promise<void> {
  const changes = setting('CHANGES', 1000);
  await runParts<Part, PartsFigures<Part> & { flow?: ChangesetFigures }>('CHANGESETS', PARTS, {}, async (_part, dir, figures) => {
    figures.flow = await benchChangesets(dir, changes, log);
    print(figures.flow);
  });
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
