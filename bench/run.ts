/**
 * `make bench`: every benchmark of bench/ in sequence, each in a child process of its own, with
 * progress on stderr and each benchmark's own table on stdout. Not part of `make test`.
 *
 *   node dist/bench/run.js                   # engine, sandbox, router, runner, lived-in, http, host, mirror, edge, access, roots, changesets
 *   node dist/bench/run.js runner http       # a subset, in the order given
 *   ROUNDS=5 DURATION=10s node dist/bench/run.js http   # bench/http/run.sh reads its settings from the environment
 *
 * Runs from the compiled tree (`make build` first; `make bench` does it). Each child is
 * stopped if this process is interrupted, and each benchmark stops the servers and worker
 * threads it starts itself (bench/http/run.sh kills its server on exit).
 *
 * Each benchmark also writes its figures as JSON (to the file named by BENCH_JSON, under
 * bench/results/parts/); at the end they are merged with the commit and the machine into
 * bench/results/latest.json, and bench/results/render.mjs rewrites the "Latest" section of
 * bench/README.md from it. A subset writes bench/results/subset.json instead and leaves
 * latest.json and the README alone: those always describe one whole run.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, totalmem, type as osType } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface Suite {
  name: string;
  what: string;
  command: string;
  args: string[];
}

/** dist/bench/run.js → the repository root. */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DIST = join(ROOT, 'dist', 'bench');
const RESULTS = join(ROOT, 'bench', 'results');
const PARTS = join(RESULTS, 'parts');

const SUITES: Suite[] = [
  { name: 'engine', what: 'world engine on LMDB (builds a 1M-entry log first: a minute or two)', command: process.execPath, args: [join(DIST, 'engine', 'run.js')] },
  { name: 'sandbox', what: 'QuickJS sandbox vs node:vm', command: process.execPath, args: ['--expose-gc', join(DIST, 'sandbox', 'run.js')] },
  { name: 'router', what: 'trie router vs a naive regex scan', command: process.execPath, args: [join(DIST, 'router', 'run.js')] },
  { name: 'runner', what: 'whole engine per request, in-process, vs a node:vm call', command: process.execPath, args: [join(DIST, 'runner', 'run.js')] },
  { name: 'lived-in', what: 'Stripe requests in accounts of 200 and 2,000 objects of each kind (half a minute)', command: process.execPath, args: [join(DIST, 'runner', 'lived-in.js'), ROOT, '200', '2000'] },
  { name: 'http', what: 'loopback load with wrk vs a uWS hello world', command: 'bash', args: [join(ROOT, 'bench', 'http', 'run.sh')] },
  { name: 'host', what: 'the multi-world host over HTTP: branches at a 1k- and a 1M-entry parent, 1,000 worlds, isolation (about ten minutes)', command: process.execPath, args: [join(DIST, 'host', 'run.js')] },
  { name: 'mirror', what: "the Stripe mirror's first useful paint in Chromium, 10 against 10,000 customers (a minute or two)", command: process.execPath, args: [join(DIST, 'mirror', 'first-paint.js')] },
  { name: 'edge', what: 'the edge variant in workerd (miniflare) over HTTP: Stripe against the single-world server, cold starts, the Worker\'s path, memory per idle world (about eight minutes)', command: process.execPath, args: [join(DIST, 'edge', 'run.js')] },
  { name: 'access', what: 'browser access: the same read with the token, named keys and session cookies, over HTTP on both Node hosts and in-process (about six minutes)', command: process.execPath, args: [join(DIST, 'access', 'run.js')] },
  { name: 'roots', what: 'a refresh of a Stripe root holding 10,000 customers against creating them through the API, and what a root adds to a request over HTTP (two or three minutes)', command: process.execPath, args: [join(DIST, 'roots', 'run.js')] },
  { name: 'changesets', what: '1,000 Stripe customers made in a world with an origin, cut, pushed, verified, approved and deployed to a root that is another world, each phase per change against one create (about a minute)', command: process.execPath, args: [join(DIST, 'changesets', 'run.js')] },
];

let running: ChildProcess | undefined;

function stopChild(): void {
  // The child runs in its own process group (detached), so its own children (a server
  // started by run.sh, wrk) go with it.
  if (running?.pid !== undefined) {
    try {
      process.kill(-running.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    stopChild();
    process.exit(130);
  });
}

function run(suite: Suite): Promise<number> {
  return new Promise((resolve) => {
    const env = { ...process.env, BENCH_JSON: partFile(suite) };
    const child = spawn(suite.command, suite.args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], detached: true, env });
    running = child;
    child.on('error', (e) => {
      console.error(`bench: ${suite.name} could not start: ${e.message}`);
      resolve(1);
    });
    child.on('exit', (code, signal) => {
      running = undefined;
      resolve(code ?? (signal !== null ? 1 : 0));
    });
  });
}

const partFile = (suite: Suite): string => join(PARTS, `${suite.name}.json`);

function git(...args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

function cpuModel(): string {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => l.startsWith('model name'));
    if (line !== undefined) return line.slice(line.indexOf(':') + 1).trim();
  } catch {
    // not Linux
  }
  return cpus()[0]?.model ?? '?';
}

/** bench/results/latest.json from what each benchmark wrote, then the README section from it. */
function writeLatest(suites: Suite[], failed: string[], loadBefore: number[], whole: boolean): void {
  const figures: Record<string, unknown> = {};
  for (const suite of suites) {
    const file = partFile(suite);
    if (existsSync(file)) figures[suite.name] = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  }
  const sha = git('rev-parse', 'HEAD');
  const latest = {
    commit: { sha, short: sha.slice(0, 7), dirty: git('status', '--porcelain', '--untracked-files=no') !== '' },
    date: new Date().toISOString(),
    machine: {
      nproc: availableParallelism(),
      cpuModel: cpuModel(),
      memoryBytes: totalmem(),
      node: process.version,
      kernel: `${osType()} ${release()}`,
      loadBefore,
      loadAfter: loadavg(),
    },
    suites: figures,
    failed,
  };
  const file = join(RESULTS, whole ? 'latest.json' : 'subset.json');
  writeFileSync(file, `${JSON.stringify(latest, null, 2)}\n`);
  console.error(`bench: wrote ${file}`);
  if (!whole) {
    console.error('bench: a subset: bench/results/latest.json and bench/README.md keep the last whole run');
    return;
  }
  try {
    execFileSync(process.execPath, [join(RESULTS, 'render.mjs'), file, join(ROOT, 'bench', 'README.md')], { cwd: ROOT, stdio: 'inherit' });
    console.error('bench: rewrote the "Latest" section of bench/README.md');
  } catch {
    console.error('bench: could not rewrite bench/README.md (see above)');
    failed.push('render');
  }
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((w) => !SUITES.some((s) => s.name === w));
  if (unknown.length > 0) {
    console.error(`bench: unknown benchmark ${unknown.join(', ')}; choose from ${SUITES.map((s) => s.name).join(', ')}`);
    process.exit(2);
  }
  const suites = wanted.length === 0 ? SUITES : wanted.map((w) => SUITES.find((s) => s.name === w) as Suite);
  const loadBefore = loadavg();
  console.error(`bench: ${suites.length} benchmark(s); node ${process.version}, ${cpus().length} CPUs, load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`);
  mkdirSync(PARTS, { recursive: true });
  // A benchmark that fails leaves no figures, rather than the last run's.
  for (const suite of suites) rmSync(partFile(suite), { force: true });
  const failed: string[] = [];
  for (const [i, suite] of suites.entries()) {
    const started = Date.now();
    console.error(`\nbench: [${i + 1}/${suites.length}] ${suite.name}: ${suite.what}`);
    console.log(`\n## ${suite.name}\n`);
    const code = await run(suite);
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    if (code !== 0) failed.push(suite.name);
    console.error(`bench: ${suite.name} ${code === 0 ? 'done' : `failed (exit ${code})`} in ${seconds} s; load average ${loadavg()[0]?.toFixed(2)}`);
  }
  writeLatest(suites, failed, loadBefore, suites.length === SUITES.length);
  if (failed.length > 0) {
    console.error(`\nbench: failed: ${failed.join(', ')}`);
    process.exit(1);
  }
}

await main();
