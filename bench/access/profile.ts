/**
 * Not part of the bench: where a credential check's time goes, with V8's CPU profiler, in-process
 * or in the server under load; then, given the profile, sums it per function:
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --cpu-prof-interval 50 dist/bench/access/profile.js head read-key-session 2000000
 *   node dist/bench/access/profile.js server read-key-session 8 /tmp/prof-server
 *   node dist/bench/access/profile.js summary /tmp/prof/<file>.cpuprofile [top] [answers|-] [frame]
 *
 * `head <credential> N` judges the heads of N reads with one credential in-process (core.ts's
 * set-up: the single-world core, its access in LMDB) and prints the µs per head (wall and CPU).
 * `server <credential> [seconds] [dir]` starts the single-world server as `kit world serve`
 * (bench/http's `server.js world`) under `node --cpu-prof --cpu-prof-interval 100`, loads it with
 * autocannon (10 connections) with that credential's read, stops it, and summarizes its profile
 * per answer within world-access.js and credentials.js. `summary` prints each function's
 * self time and, for the functions of the check (host/core/, lmdb, crypto), their inclusive time,
 * in % of the profile's samples (and in µs per answer, given how many answers the profile covers:
 * a server's profile under load, say); given a frame (`world-access.js`), the inclusive times of
 * only the samples whose stack holds it: what that code's time is made of.
 */
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SINGLE_TOKEN, type SingleWorld } from '../edge/servers.js';
import { CREDENTIALS, type CredentialKind } from './credentials.js';
import { setUpCore } from './core.js';
import { singleTarget } from './http.js';

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

/** dist/bench/access/ → dist/bench/http/server.js. */
const SERVER = join(dirname(fileURLToPath(import.meta.url)), '..', 'http', 'server.js');

async function profileServer(kind: CredentialKind, seconds: number, profiles: string): Promise<void> {
  mkdirSync(profiles, { recursive: true });
  const before = new Set(readdirSync(profiles));
  const dir = mkdtempSync(join(tmpdir(), 'kit-bench-access-server-'));
  const child = spawn(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${profiles}`, '--cpu-prof-interval', '100', SERVER, 'world', '0', SINGLE_TOKEN, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const port = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        const m = /^ready (\d+)/m.exec(out);
        if (m !== null) resolve(m[1]!);
      });
      void exited.then(() => reject(new Error(`the server exited before listening: ${out}`)));
    });
    // What singleTarget reads of a started server (its CPU is not read here).
    const single = { url: `http://127.0.0.1:${port}`, pid: child.pid!, cpuMs: () => 0 } as unknown as SingleWorld;
    const target = await singleTarget(single);
    let answers = 0;
    let bad = 0;
    const run = autocannon({ url: `${target.base}${target.world.readPath}`, connections: 10, duration: seconds, headers: target.credentials[kind] });
    run.on('response', (_client: unknown, status: number) => (status === 200 ? answers++ : bad++));
    await run;
    if (bad > 0) throw new Error(`${bad} answers with ${kind} were not 200`);
    child.kill('SIGTERM');
    await exited;
    const file = readdirSync(profiles).find((f) => f.endsWith('.cpuprofile') && !before.has(f));
    if (file === undefined) throw new Error(`the server wrote no profile to ${profiles}`);
    console.log(`${kind}: ${answers} answers in ${seconds} s; ${join(profiles, file)}\n`);
    summary(join(profiles, file), 14, answers, kind === 'token' || kind === 'token-origin' ? 'credentials.js' : 'world-access.js');
  } finally {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

const label = (n: ProfileNode): string => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url === '' ? '' : `${basename(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`}`.trim();

function summary(file: string, top: number, answers: number | undefined, under: string | undefined): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const hits = new Map<number, number>();
  for (const s of profile.samples) hits.set(s, (hits.get(s) ?? 0) + 1);
  const total = profile.samples.length;
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const stackOf = (id: number): string[] => {
    const out: string[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) out.push(label(byId.get(at)!));
    return out;
  };
  // With `under`, the inclusive list counts only samples whose stack holds a frame naming it.
  const inScope = (id: number): boolean => under === undefined || stackOf(id).some((l) => l.includes(under));
  for (const [id, count] of hits) {
    const leaf = byId.get(id)!;
    self.set(label(leaf), (self.get(label(leaf)) ?? 0) + count);
    // Each function once per sample, however deep it recurses.
    const seen = new Set<string>();
    if (!inScope(id)) continue;
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
  if (under === undefined) {
    console.log('\ninclusive time (the check and what it calls):');
    const ofCheck = /world-access|credentials\.js|cookies\.js|origins\.js|core\.js|forward\.js|browser\.js|lmdb|msgpack|digest|hash|timingSafeEqual|encode|get /;
    for (const [l, c] of [...inclusive].filter(([l]) => ofCheck.test(l)).sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(c).padStart(6)}  ${l}`);
  } else {
    console.log(`\ninclusive time within ${under}:`);
    for (const [l, c] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(c).padStart(6)}  ${l}`);
  }
}

const [mode, arg, count] = process.argv.slice(2);
const credential = (CREDENTIALS as readonly string[]).includes(arg ?? '');
if (mode === 'head' && credential) await judge(arg as CredentialKind, Number(count ?? 1_000_000));
else if (mode === 'server' && credential) await profileServer(arg as CredentialKind, Number(count ?? 8), resolve(process.argv[5] ?? join(tmpdir(), 'kit-bench-access-profiles')));
else if (mode === 'summary' && arg !== undefined) summary(arg, Number(count ?? 25), process.argv[5] === undefined || process.argv[5] === '-' ? undefined : Number(process.argv[5]), process.argv[6]);
else {
  console.error(`usage: profile.js head <${CREDENTIALS.join('|')}> [N] | server <credential> [seconds] [dir] | summary <file.cpuprofile> [top] [answers|-] [frame]`);
  process.exit(2);
}
