/**
 * A `git clone`'s pack from the GitHub twin, against the real git serving the same repository:
 * a repository of a 3.5 MB incompressible blob and 80 text files of ~50 KB (a pack of ~7 MiB)
 * is pushed to a served world with the real `git`, then the same upload-pack request (want
 * HEAD, done) is answered by the twin over HTTP and by `git upload-pack --stateless-rpc` on a
 * bare clone of it. Prints the median of `runs` answers of each, ms per MiB of pack, and the
 * twin's time as a ratio of git's (same run). Then times whole `git clone --bare`s from the
 * twin. Not part of `make bench`:
 *
 *   node dist/bench/runner/clone.js [<twin entry>] [runs]     (default: this tree's twin, 8)
 */
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openWorldRunner } from '../../runtime/runner/index.js';
import { MemoryStorage } from '../../runtime/store/index.js';
import { buildTwin } from '../../sdk/twin/build.js';
import { serveWorld } from '../../test/helpers/served-world.js';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..', '..', '..');
const entry = resolve(process.argv[2] || join(root, 'twins', 'github', 'twin', 'index.ts'));
const runs = Number(process.argv[3] ?? 8);
const TOKENS = { token: 'tok_githubCloneBenchWorldToken00000000001', readToken: 'tok_r_githubCloneBenchReadToken0000000001' };
const START = Date.parse('2026-01-01T00:00:00.000Z');

const dir = mkdtempSync(join(tmpdir(), 'kit-clone-bench-'));
const env = {
  PATH: process.env['PATH'] ?? '', HOME: dir, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'B', GIT_AUTHOR_EMAIL: 'b@example.test', GIT_COMMITTER_NAME: 'B', GIT_COMMITTER_EMAIL: 'b@example.test',
};
const git = (cwd: string, ...args: string[]): Promise<string> =>
  new Promise((ok, fail) => execFile('git', args, { cwd, env, maxBuffer: 1 << 26 }, (e, out, err) => (e ? fail(new Error(String(err))) : ok(String(out).trim()))));

/** `git upload-pack --stateless-rpc` on `repo`, fed `body`: ms until its answer ends, and the answer's size. */
function realGit(repo: string, body: string): Promise<{ ms: number; bytes: number }> {
  return new Promise((ok, fail) => {
    const t = performance.now();
    const child = spawn('git', ['upload-pack', '--stateless-rpc', repo], { env });
    let bytes = 0;
    child.stdout.on('data', (d: Buffer) => (bytes += d.length));
    child.on('error', fail);
    child.on('close', (code) => (code === 0 ? ok({ ms: performance.now() - t, bytes }) : fail(new Error(`git upload-pack exited ${String(code)}`))));
    child.stdin.end(body);
  });
}

const median = (a: number[]): number => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)] ?? NaN;

const runner = await openWorldRunner({ storage: new MemoryStorage(), world: 'bench', twins: [{ ...(await buildTwin(entry)), trusted: true }], now: () => START });
const { server } = await serveWorld(runner, { vendor: 'github', requestScopes: ['read'], tokens: TOKENS, start: START });
const base = `${server.worldUrl}/github`;
const remote = new URL(`${base}/admin/big.git`);
remote.username = 'x';
remote.password = TOKENS.token;
try {
  const made = await fetch(`${base}/user/repos`, { method: 'POST', headers: { authorization: `token ${TOKENS.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'big', auto_init: true }) });
  if (made.status !== 201) throw new Error(`creating the repository answered ${made.status}`);
  await git(dir, 'clone', '-q', remote.href, 'work');
  const work = join(dir, 'work');
  let seed = 12345;
  const next = (): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0), seed >>> 8);
  writeFileSync(join(work, 'random.bin'), Buffer.from(Array.from({ length: 3_500_000 }, () => next() & 255)));
  await git(work, 'add', '-A');
  await git(work, 'commit', '-q', '-m', 'random');
  await git(work, 'push', '-q', 'origin', 'HEAD:main');
  const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa', 'lambda', 'mu'];
  for (let push = 0; push < 2; push++) {
    mkdirSync(join(work, `src${push}`));
    for (let f = 0; f < 40; f++) {
      let text = '';
      while (text.length < 50_000) text += `${Array.from({ length: 8 }, () => words[next() % words.length]).join(' ')} ${next()}\n`;
      writeFileSync(join(work, `src${push}`, `f${f}.txt`), text);
    }
    await git(work, 'add', '-A');
    await git(work, 'commit', '-q', '-m', `text ${push}`);
    await git(work, 'push', '-q', 'origin', 'HEAD:main');
  }
  // The real git's copy: a bare clone from the twin, so both serve the same objects.
  await git(dir, 'clone', '-q', '--bare', remote.href, 'mirror.git');
  const head = await git(work, 'rev-parse', 'HEAD');
  const pkt = (t: string): string => (t.length + 4).toString(16).padStart(4, '0') + t;
  const body = `${pkt(`want ${head} no-progress\n`)}0000${pkt('done\n')}`;
  const twin = async (): Promise<{ ms: number; bytes: number }> => {
    const t = performance.now();
    const res = await fetch(`${base}/admin/big.git/git-upload-pack`, { method: 'POST', headers: { authorization: `token ${TOKENS.token}`, 'content-type': 'application/x-git-upload-pack-request' }, body });
    const bytes = (await res.arrayBuffer()).byteLength;
    if (res.status !== 200) throw new Error(`upload-pack answered ${res.status}`);
    return { ms: performance.now() - t, bytes };
  };
  const twinFirst = await twin();
  const gitFirst = await realGit(join(dir, 'mirror.git'), body);
  const twinMs: number[] = [];
  const gitMs: number[] = [];
  // Alternated, so a slow moment of the machine falls on both.
  for (let i = 0; i < runs; i++) {
    twinMs.push((await twin()).ms);
    gitMs.push((await realGit(join(dir, 'mirror.git'), body)).ms);
  }
  const cloneMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await git(dir, 'clone', '-q', '--bare', remote.href, `c${i}.git`);
    cloneMs.push(performance.now() - t);
    rmSync(join(dir, `c${i}.git`), { recursive: true, force: true });
  }
  const mib = twinFirst.bytes / 2 ** 20;
  console.log(`pack: twin ${mib.toFixed(2)} MiB (stored, undeltified), git ${(gitFirst.bytes / 2 ** 20).toFixed(2)} MiB (compressed)`);
  console.log(`upload-pack, median of ${runs}: twin ${median(twinMs).toFixed(1)} ms (${(median(twinMs) / mib).toFixed(1)} ms per MiB), git ${median(gitMs).toFixed(1)} ms; twin / git ${(median(twinMs) / median(gitMs)).toFixed(2)}`);
  console.log(`git clone --bare from the twin, median of ${runs}: ${median(cloneMs).toFixed(1)} ms`);
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
