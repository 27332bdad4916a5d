/**
 * Not part of the bench: where a credential check's time goes, with V8's CPU profiler. Judges
 * the heads of N reads with one credential in-process (core.ts's set-up: the single-world core,
 * its access in LMDB), then, given the profile, sums it per function:
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --cpu-prof-interval 50 dist/bench/access/profile.js head read-key-session 2000000
 *   node dist/bench/access/profile.js summary /tmp/prof/<file>.cpuprofile [top] [answers]
 *
 * `head <credential> N` prints the µs per head (wall and CPU); `summary` prints each function's
 * self time and, for the functions of the check (host/core/, lmdb, crypto), their inclusive time,
 * in % of the profile's samples (and in µs per answer, given how many answers the profile covers:
 * a server's profile under load, say).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { CREDENTIALS, type CredentialKind } from './credentials.js';
import { setUpCore } from './core.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  /** µs. */
  startTime: number;
  endTime: number;
}

async function judge(kind: CredentialKind, n: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kit-bench-access-profile-'));
  const set = await setUpCore(dir);
  try {
    let accepted = 0;
    const t0 = process.hrtime.bigint();
    const u0 = process.cpuUsage();
    for (let i = 0; i < n; i++) if (typeof set.core.handler.head(set.head(kind)) === 'function') accepted++;
    const wallUs = Number(process.hrtime.bigint() - t0) / 1000;
    const cpu = process.cpuUsage(u0);
    if (accepted !== n) throw new Error(`${n - accepted} of ${n} heads with ${kind} were refused`);
    console.log(`${kind}: ${n} heads, ${(wallUs / n).toFixed(3)} µs wall, ${((cpu.user + cpu.system) / n).toFixed(3)} µs CPU per head`);
  } finally {
    await set.storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const label = (n: ProfileNode): string => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url === '' ? '' : `${basename(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`}`.trim();

function summary(file: string, top: number, answers: number | undefined): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const hits = new Map<number, number>();
  for (const s of profile.samples) hits.set(s, (hits.get(s) ?? 0) + 1);
  const total = profile.samples.length;
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, count] of hits) {
    const leaf = byId.get(id)!;
    self.set(label(leaf), (self.get(label(leaf)) ?? 0) + count);
    // Each function once per sample, however deep it recurses.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const l = label(byId.get(at)!);
      if (seen.has(l)) continue;
      seen.add(l);
      inclusive.set(l, (inclusive.get(l) ?? 0) + count);
    }
  }
  // Each sample stands for the profile's span over its samples; per answer when the count is given.
  const usPerSample = (profile.endTime - profile.startTime) / total;
  const pct = (x: number): string => `${((100 * x) / total).toFixed(1)}%${answers === undefined ? '' : ` ${((x * usPerSample) / answers).toFixed(2).padStart(6)} µs/answer`}`;
  console.log(`${total} samples over ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s${answers === undefined ? '' : `, ${answers} answers`}\n\nself time:`);
  for (const [l, c] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(c).padStart(6)}  ${l}`);
  console.log('\ninclusive time (the check and what it calls):');
  const ofCheck = /world-access|credentials\.js|cookies\.js|origins\.js|core\.js|forward\.js|browser\.js|lmdb|msgpack|digest|hash|timingSafeEqual|encode|get /;
  for (const [l, c] of [...inclusive].filter(([l]) => ofCheck.test(l)).sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(c).padStart(6)}  ${l}`);
}

const [mode, arg, count] = process.argv.slice(2);
if (mode === 'head' && (CREDENTIALS as readonly string[]).includes(arg ?? '')) await judge(arg as CredentialKind, Number(count ?? 1_000_000));
else if (mode === 'summary' && arg !== undefined) summary(arg, Number(count ?? 25), process.argv[5] === undefined ? undefined : Number(process.argv[5]));
else {
  console.error(`usage: profile.js head <${CREDENTIALS.join('|')}> [N] | summary <file.cpuprofile> [top] [answers]`);
  process.exit(2);
}
