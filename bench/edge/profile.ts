/**
 * Diagnoses of the edge variant taken inside workerd, through its inspector (not part of `make
 * bench`). `node --cpu-prof` profiles Node only, and the Worker and its Durable Objects run in
 * workerd, so this starts the built Worker as `startEdgeDev` does (host/edge/dev.ts: the same
 * settings, from edgeWorkerSettings) plus miniflare's `inspectorPort`, and speaks the Chrome DevTools
 * Protocol to workerd over a WebSocket:
 *
 *   node dist/bench/edge/profile.js retrieve            # or create; 5 s of load by default
 *   node dist/bench/edge/profile.js create 10 /tmp/edge-create.cpuprofile
 *   node dist/bench/edge/profile.js evictions 20,80,160,250
 *   node dist/bench/edge/profile.js heap 500 200
 *
 * - retrieve | create: one world with twenty customers; autocannon with 10 connections on the
 *   Stripe retrieve or create while V8's sampling profiler runs (100 µs). The profile (for Chrome
 *   DevTools or speedscope) goes to the file named; a summary is printed: self time per source
 *   file of the bundle (through its source map) and the busiest functions. Then twenty more
 *   requests, one at a time, under logging breakpoints (they log and never stop) on the bundle's
 *   two wrappers every SQLite call goes through (`sqlOfDurableObject`'s `exec` and
 *   `transactionSync`): statements and transactions per answer, and the callers of one answer's.
 * - evictions: four bare worlds, each touched once, then left alone; one is touched again after
 *   each wait (seconds since the first touches), with a logging breakpoint in `WorldFamily`'s
 *   constructor: a constructor run on that touch means workerd had evicted the idle object.
 *
 * - heap: workerd's RSS beside its V8 heap (`Runtime.getHeapUsage`) with no world, with `n` bare
 *   worlds made and touched once, after `idle` seconds alone, then after 100 and 200 more worlds:
 *   no collection can be forced in workerd (`HeapProfiler.collectGarbage` never answers), so the
 *   new worlds' allocations are what make V8 collect what the evicted objects left.
 *
 * workerd handles the Profiler domain itself (start, stop, sampling interval): V8's precise
 * coverage (call counts) answers "Profiler is not enabled" there, hence the breakpoints.
 * `Runtime.evaluate` has no context outside a request, hence the console messages.
 * All Durable Objects of the Worker run in its one isolate: one session sees them all.
 */
import autocannon from 'autocannon';
import { readFileSync, writeFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { Miniflare } from 'miniflare';
import WebSocket from 'ws';
import { defaultEdgeBuildDir, edgeWorkerSettings } from '../../host/edge/dev.js';
import { createCustomer, createWorld, retrieveCustomer, vendorHeaders, type MadeWorld } from '../host/client.js';
import { ADMIN_TOKEN, findWorkerd, processMemory, workerdsRunning } from './servers.js';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface Profile {
  nodes: { id: number; callFrame: CallFrame }[];
  samples: number[];
  timeDeltas: number[];
}

interface Session {
  send<T>(method: string, params?: object): Promise<T>;
  /** Console messages whose first argument starts with `prefix`: [the rest of it, the second argument]. */
  messages(prefix: string): [string, string][];
  close(): void;
}

/** One Chrome DevTools Protocol session. */
async function inspect(url: string): Promise<Session> {
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  let next = 0;
  const waiting = new Map<number, { resolve: (x: unknown) => void; reject: (e: Error) => void }>();
  const logged: [string, string][] = [];
  socket.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString()) as { id?: number; method?: string; params?: { args?: { value?: unknown }[] }; result?: unknown; error?: { message: string } };
    if (message.method === 'Runtime.consoleAPICalled') {
      const [first, second] = message.params?.args ?? [];
      if (typeof first?.value === 'string') logged.push([first.value, String(second?.value ?? '')]);
      return;
    }
    const pending = message.id === undefined ? undefined : waiting.get(message.id);
    if (pending === undefined) return;
    waiting.delete(message.id!);
    if (message.error !== undefined) pending.reject(new Error(message.error.message));
    else pending.resolve(message.result);
  });
  return {
    send<T>(method: string, params: object = {}): Promise<T> {
      const id = ++next;
      socket.send(JSON.stringify({ id, method, params }));
      return new Promise<T>((resolve, reject) => waiting.set(id, { resolve: resolve as (x: unknown) => void, reject }));
    },
    messages: (prefix) => logged.filter(([m]) => m.startsWith(prefix)).map(([m, s]) => [m.slice(prefix.length), s]),
    close: () => socket.close(),
  };
}

interface Inspectable {
  url: string;
  /** The workerd process. */
  pid: number;
  session: Session;
  bundle: string;
  map: SourceMap | undefined;
  close(): Promise<void>;
}

/** The built Worker with startEdgeDev's settings and the inspector on; a session on the Worker's isolate. */
async function startInspectable(): Promise<Inspectable> {
  const buildDir = defaultEdgeBuildDir();
  const others = workerdsRunning();
  const inspectorPort = 9000 + Math.floor(Math.random() * 20000);
  const miniflare = new Miniflare({
    ...edgeWorkerSettings(buildDir, ADMIN_TOKEN),
    durableObjectsPersist: false,
    host: '127.0.0.1',
    port: 0,
    inspectorPort,
    // The logging breakpoints' messages reach the session; workerd's own copy of them is dropped.
    handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
      stdout.resume();
      stderr.pipe(process.stderr);
    },
  });
  try {
    const url = (await miniflare.ready).origin;
    const pid = await findWorkerd(others);
    const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json()) as { title: string; webSocketDebuggerUrl: string }[];
    // The user Worker's isolate (miniflare names it core:user:<name>).
    const target = targets.find((t) => t.title.startsWith('core:user')) ?? targets[0];
    if (target === undefined) throw new Error(`workerd's inspector lists no target: ${JSON.stringify(targets)}`);
    const session = await inspect(target.webSocketDebuggerUrl);
    let map: SourceMap | undefined;
    try {
      map = new SourceMap(JSON.parse(readFileSync(join(buildDir, 'worker.js.map'), 'utf8')) as ConstructorParameters<typeof SourceMap>[0]);
    } catch {
      console.log('(no source map: dist/edge/worker.js.map; locations are in the bundle)');
    }
    return {
      url,
      pid,
      session,
      bundle: readFileSync(join(buildDir, 'worker.js'), 'utf8'),
      map,
      async close() {
        session.close();
        await miniflare.dispose();
      },
    };
  } catch (e) {
    await miniflare.dispose();
    throw e;
  }
}

/** Where a bundle location comes from: `file:line` through the source map, else the bundle's own. */
function origin(map: SourceMap | undefined, url: string, line: number, column: number): { file: string; where: string } {
  if (map !== undefined && url.endsWith('worker.js') && line >= 0) {
    const entry = map.findEntry(line, column) as { originalSource?: string; originalLine?: number };
    if (entry.originalSource !== undefined) {
      const file = entry.originalSource.replace(/^(\.\.\/)+(main\/|wt-[^/]+\/)?/, '');
      return { file, where: `${file}:${(entry.originalLine ?? 0) + 1}` };
    }
  }
  return { file: url, where: `${url}:${line + 1}` };
}

/** The 0-based line of the bundle holding `text` (after the line holding `after`, when given). */
function lineOf(bundle: string, text: string, after?: string): number {
  const lines = bundle.split('\n');
  const from = after === undefined ? 0 : lines.findIndex((l) => l.includes(after));
  const at = from < 0 ? -1 : lines.findIndex((l, i) => i >= from && l.includes(text));
  if (at < 0) throw new Error(`dist/edge/worker.js has no line with ${JSON.stringify(text)}${after === undefined ? '' : ` after ${JSON.stringify(after)}`}: the bundle changed, update profile.ts`);
  return at;
}

/** A breakpoint that logs `kit-count <name>` (with the stack) and never stops. */
async function countAt(session: Session, line: number, name: string): Promise<void> {
  await session.send('Debugger.setBreakpointByUrl', { lineNumber: line, urlRegex: 'worker\\.js$', columnNumber: 0, condition: `(console.debug('kit-count ${name}', new Error().stack), false)` });
}

function summarize(profile: Profile, map: SourceMap | undefined, answers: number): void {
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byFile = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const node of profile.nodes) {
    const ms = self.get(node.id) ?? 0;
    if (ms === 0) continue;
    const f = node.callFrame;
    const found = origin(map, f.url, f.lineNumber, f.columnNumber);
    const file = f.url === '' ? `(${f.functionName || 'native'})` : found.file;
    byFile.set(file, (byFile.get(file) ?? 0) + ms);
    const name = `${f.functionName || '(anonymous)'} ${found.where}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + ms);
  }
  const top = (m: Map<string, number>, n: number): [string, number][] => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
  console.log(`\nsampled ${total.toFixed(0)} ms in the Worker's isolate over ${answers} answers (${((1000 * total) / Math.max(1, answers)).toFixed(0)} µs per answer, idle included)\n`);
  console.log('| self ms | % | source file |\n|---:|---:|---|');
  for (const [file, ms] of top(byFile, 30)) console.log(`| ${ms.toFixed(0)} | ${((100 * ms) / total).toFixed(1)} | ${file} |`);
  console.log('\n| self ms | % | function |\n|---:|---:|---|');
  for (const [name, ms] of top(byFunction, 40)) console.log(`| ${ms.toFixed(0)} | ${((100 * ms) / total).toFixed(1)} | ${name} |`);
}

/** A logged stack's first frames, each through the source map. */
function frames(stack: string, map: SourceMap | undefined, depth = 6): string {
  return stack
    .split('\n')
    .slice(2, 2 + depth)
    .map((line) => {
      const at = /\(?([^\s(]*worker\.js):(\d+):(\d+)\)?$/.exec(line.trim());
      const called = line.trim().replace(/^at /, '');
      const name = /^(file:|\()/.test(called) ? '(anonymous)' : (called.split(' ')[0] ?? '');
      return at === null ? line.trim() : `${name} ${origin(map, at[1]!, Number(at[2]) - 1, Number(at[3]) - 1).where}`;
    })
    .join(' < ');
}

async function profileRequests(request: 'retrieve' | 'create', seconds: number, out: string): Promise<void> {
  const edge = await startInspectable();
  try {
    const world = await createWorld({ url: edge.url, admin: ADMIN_TOKEN }, 'bench', 'profiled', ['stripe']);
    const customer = await createCustomer(world, 0);
    for (let i = 1; i < 20; i++) await createCustomer(world, i);
    const form = { ...vendorHeaders(world.token), 'content-type': 'application/x-www-form-urlencoded' };
    const load = (duration: number): Promise<{ requests: { total: number }; non2xx: number }> =>
      autocannon(
        request === 'create'
          ? { url: `${world.url}/stripe/v1/customers`, method: 'POST', body: 'email=grace%40example.com&name=Grace', headers: form, connections: 10, duration }
          : { url: `${world.url}/stripe/v1/customers/${customer}`, headers: vendorHeaders(world.token), connections: 10, duration },
      ) as unknown as Promise<{ requests: { total: number }; non2xx: number }>;
    await load(2); // warm-up
    const { session } = edge;
    await session.send('Profiler.enable');
    await session.send('Profiler.setSamplingInterval', { interval: 100 });
    await session.send('Profiler.start');
    const result = await load(seconds);
    const { profile } = await session.send<{ profile: Profile }>('Profiler.stop');
    writeFileSync(out, JSON.stringify(profile));
    console.log(`${request}: ${result.requests.total} answers in ${seconds} s (${result.non2xx} non-2xx); the profile written to ${out}`);
    summarize(profile, edge.map, result.requests.total);

    // SQLite calls per answer, one answer at a time.
    await session.send('Runtime.enable');
    await session.send('Debugger.enable');
    await countAt(session, lineOf(edge.bundle, 'storage.sql.exec(query, ...bindings)'), 'exec');
    await countAt(session, lineOf(edge.bundle, 'storage.transactionSync(fn)'), 'transactionSync');
    const one = (): Promise<unknown> => (request === 'create' ? createCustomer(world, 99) : retrieveCustomer(world, customer));
    await one();
    await sleep(300);
    const before = session.messages('kit-count ').length;
    await one();
    await sleep(300);
    const first = session.messages('kit-count ').slice(before);
    const n = 20;
    for (let i = 1; i < n; i++) await one();
    await sleep(300);
    const all = session.messages('kit-count ').slice(before);
    const per = (name: string): string => (all.filter(([k]) => k === name).length / n).toFixed(2);
    console.log(`\nSQLite per ${request} (${n} answers, one at a time): ${per('exec')} statements, ${per('transactionSync')} transactions; one answer's, in order:\n`);
    for (const [name, stack] of first) console.log(`- ${name}: ${frames(stack, edge.map)}`);
  } finally {
    await edge.close();
  }
}

async function evictions(waits: number[]): Promise<void> {
  const edge = await startInspectable();
  try {
    const { session } = edge;
    await session.send('Runtime.enable');
    await session.send('Debugger.enable');
    await countAt(session, lineOf(edge.bundle, 'super(ctx, env);', 'var WorldFamily = class extends') + 1, 'family');
    const worlds: [MadeWorld, string][] = [];
    for (let i = 0; i < waits.length; i++) {
      const world = await createWorld({ url: edge.url, admin: ADMIN_TOKEN }, 'bench', `idle-${i}`, ['stripe']);
      worlds.push([world, await createCustomer(world, 0)]);
    }
    await sleep(300);
    const constructed = (): number => session.messages('kit-count family').length;
    console.log(`${waits.length} worlds made and touched: ${constructed()} family objects constructed`);
    const started = Date.now();
    for (const [i, wait] of waits.entries()) {
      await sleep(Math.max(0, started + wait * 1000 - Date.now()));
      const before = constructed();
      const t = performance.now();
      await retrieveCustomer(worlds[i]![0], worlds[i]![1]);
      const ms = performance.now() - t;
      await sleep(300);
      const again = constructed() > before;
      console.log(`world ${i} touched after ${wait} s alone: answered in ${ms.toFixed(1)} ms; ${again ? 'its family object was constructed again (workerd had evicted it)' : 'the same family object answered (not evicted)'}`);
    }
  } finally {
    await edge.close();
  }
}

async function heap(worlds: number, idle: number): Promise<void> {
  const edge = await startInspectable();
  try {
    const mib = (x: number): string => (x / 2 ** 20).toFixed(1);
    const read = async (what: string): Promise<void> => {
      const m = processMemory(edge.pid);
      const h = await edge.session.send<{ usedSize: number; totalSize: number }>('Runtime.getHeapUsage');
      console.log(`| ${what} | ${mib(m.rss)} | ${mib(m.anon)} | ${mib(m.file)} | ${mib(h.usedSize)} | ${mib(h.totalSize)} |`);
    };
    const make = async (prefix: string, n: number): Promise<void> => {
      for (let i = 0; i < n; i += 8) {
        await Promise.all(
          Array.from({ length: Math.min(8, n - i) }, async (_, j) => {
            const world = await createWorld({ url: edge.url, admin: ADMIN_TOKEN }, 'bench', `${prefix}-${i + j}`, ['stripe']);
            await createCustomer(world, 0);
          }),
        );
      }
    };
    await fetch(`${edge.url}/-/ping`);
    console.log('| workerd | RSS MiB | anon MiB | file MiB | V8 heap used MiB | V8 heap committed MiB |\n|---|---:|---:|---:|---:|---:|');
    await read('after GET /-/ping, no world');
    await make('held', worlds);
    await read(`${worlds} worlds made, each touched once`);
    await sleep(idle * 1000);
    await read(`${idle} s later, no request meanwhile`);
    await make('more', 100);
    await read('then 100 more worlds made and touched');
    await make('more2', 200);
    await read('then 200 more');
  } finally {
    await edge.close();
  }
}

async function main(): Promise<void> {
  const [mode = 'retrieve', a, b] = process.argv.slice(2);
  if (mode === 'heap') return heap(Number(a ?? '500'), Number(b ?? '200'));
  if (mode === 'evictions') {
    const waits = (a ?? '20,80,160,250').split(',').map(Number);
    if (waits.some((w) => !Number.isFinite(w) || w < 0)) throw new Error('usage: profile.js evictions <seconds,seconds,…>');
    return evictions(waits);
  }
  if (mode !== 'retrieve' && mode !== 'create') throw new Error('usage: profile.js retrieve|create [seconds] [out.cpuprofile] | evictions [seconds,…] | heap [worlds] [idle seconds]');
  return profileRequests(mode, Number(a ?? '5'), b ?? join(process.cwd(), `edge-${mode}.cpuprofile`));
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
