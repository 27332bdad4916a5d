/**
 * Not part of the bench: where the copy's time goes. The real account (n customers) and the copy
 * as the bench serves them, the copy under `node --cpu-prof`, rooted and refreshed once; then
 * one of:
 *
 *   node dist/bench/roots/profile.js status [customers] [seconds]    # GET …/twins/stripe/status under autocannon
 *   node dist/bench/roots/profile.js get [customers] [seconds]       # the rooted Stripe GET of a customer
 *   node dist/bench/roots/profile.js clock [customers] [seconds]     # GET …/clock
 *   node dist/bench/roots/profile.js refresh [customers] [times]     # `times` refreshes with nothing changed (?force=1)
 *
 * The copy is then stopped (its profile written) and summed: the CPU under each function
 * (inclusive, the profiler's own cost included) per answer or per refresh, the top 40; for
 * `status`, the status's parts (what `twinStatus` and the root's part of it call); for `get`, what
 * `x-kit-observed-at` costs. Defaults: 2,000 customers, 5 s, 5 times.
 */
import autocannon from 'autocannon';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectStatus, rootAt, stripeHeaders, worldApi, startWorldServer } from './servers.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [what = 'status', customersArg = '2000', amountArg] = process.argv.slice(2);
if (!['status', 'get', 'clock', 'refresh'].includes(what)) throw new Error('usage: profile.js status|get|clock|refresh [customers] [seconds|times]');
const customers = Number(customersArg);
const amount = Number(amountArg ?? '5');

function frameName(node: ProfileNode): string {
  const f = node.callFrame;
  return `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;
}

/** µs under each frame (counted once per sample however often it recurs), and each sample's stack (innermost first). */
function summarise(profile: Profile): { busyUs: number; under: Map<string, number>; stacks: { us: number; names: string[] }[] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const under = new Map<string, number>();
  const stacks: { us: number; names: string[] }[] = [];
  let busyUs = 0;
  profile.samples.forEach((sample, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    if (byId.get(sample)?.callFrame.functionName === '(idle)') return;
    busyUs += us;
    const names: string[] = [];
    for (let id: number | undefined = sample; id !== undefined; id = parent.get(id)) names.push(frameName(byId.get(id)!));
    stacks.push({ us, names });
    for (const name of new Set(names)) under.set(name, (under.get(name) ?? 0) + us);
  });
  return { busyUs, under, stacks };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kit-bench-roots-profile-'));
  const profiles = join(dir, 'profiles');
  try {
    const real = await startWorldServer(join(dir, 'real'), 'real', customers);
    const copy = await startWorldServer(join(dir, 'copy'), 'copy', 0, ['--cpu-prof', `--cpu-prof-dir=${profiles}`, '--cpu-prof-interval', '100']);
    let done = 0;
    try {
      await rootAt(copy, real);
      expectStatus(await worldApi(copy, 'POST', '/twins/stripe/refresh'), 200, 'POST …/refresh');
      if (what === 'refresh') {
        for (; done < amount; done++) expectStatus(await worldApi(copy, 'POST', '/twins/stripe/refresh?force=1'), 200, 'POST …/refresh?force=1');
      } else {
        const url = what === 'get' ? `${copy.url}/stripe/v1/customers/${real.firstCustomer}` : `${copy.api}${what === 'status' ? '/twins/stripe/status' : '/clock'}`;
        const headers = what === 'get' ? stripeHeaders(copy) : { 'x-kit-token': copy.token };
        const instance = autocannon({ url, connections: 10, duration: amount, headers });
        instance.on('response', (_c: unknown, status: number) => void (status === 200 ? done++ : 0));
        await instance;
      }
    } finally {
      await copy.stop();
      await real.stop();
    }
    const file = readdirSync(profiles).find((f) => f.endsWith('.cpuprofile'));
    if (file === undefined) throw new Error('the copy wrote no profile');
    const { busyUs, under, stacks } = summarise(JSON.parse(readFileSync(join(profiles, file), 'utf8')) as Profile);
    const per = what === 'refresh' ? 'refresh' : 'answer';
    console.log(`${what}: ${done} ${per === 'refresh' ? 'refreshes with nothing changed' : 'answers'} (after a first refresh of ${customers} customers, included below); the copy busy ${(busyUs / 1000).toFixed(0)} ms`);
    console.log(`\n| µs per ${per} | % of busy | function |\n|---:|---:|---|`);
    for (const [name, us] of [...under].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`| ${(us / Math.max(1, done)).toFixed(1)} | ${((100 * us) / busyUs).toFixed(1)} | ${name} |`);
    if (what === 'get') {
      // The root's part of a vendor answer: x-kit-observed-at (world-runner.ts asks RootSet.observedAt).
      const us = [...under].filter(([name]) => name.startsWith('observedAt dist/runtime/runner/roots.js')).reduce((n, [, x]) => n + x, 0);
      console.log(`\nUnder RootSet.observedAt (x-kit-observed-at): ${(us / Math.max(1, done)).toFixed(3)} µs per answer, ${((100 * us) / busyUs).toFixed(3)}% of busy.`);
    }
    if (what === 'status') {
      // What the status spends its time in: the frames just inside twinStatus, and inside the root's part of it.
      for (const [title, prefix] of [['twinStatus calls', 'twinStatus '], ["the root's part (RootSet.status) calls", 'status dist/runtime/runner/roots.js']] as const) {
        const parts = new Map<string, number>();
        for (const { us, names } of stacks) {
          const at = names.findIndex((n) => n.startsWith(prefix));
          if (at < 0) continue;
          const inside = at === 0 ? '(itself)' : names[at - 1]!;
          parts.set(inside, (parts.get(inside) ?? 0) + us);
        }
        console.log(`\n| µs per answer | ${title} |\n|---:|---|`);
        for (const [name, us] of [...parts].sort((a, b) => b[1] - a[1])) console.log(`| ${(us / Math.max(1, done)).toFixed(1)} | ${name} |`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
