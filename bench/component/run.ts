/**
 * One twin in three engines, in one run: the notes twin (test/components/notes/: the same
 * notes.js) as a trusted JavaScript twin (V8 realm in the runner's thread), as an untrusted
 * JavaScript twin (QuickJS in the world's lane, a worker thread) and as a WebAssembly component
 * (componentize-qjs's QuickJS compiled to wasm, in the same lane). Each round runs every engine
 * once, in turn; the ratios are taken within a round, and the medians over rounds printed.
 * In-process through the whole runner (routing, the twin's call, the append) on memory storage.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/component/run.js [rounds=5]
 *   node dist/bench/component/run.js rebuild   # an edit of the component's source to its first answer
 */
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadComponentTwin } from '../../runtime/component/index.js';
import { openWorldRunner, type WorldRunner } from '../../runtime/runner/index.js';
import type { TwinBundle, WorldRequest } from '../../runtime/runner/types.js';
import { MemoryStorage } from '../../runtime/store/index.js';
import { buildTwin } from '../../sdk/twin/build.js';
import { componentizeTwin } from '../../sdk/wit/componentize.js';
import { COMPONENTS_DIR, componentTwin } from '../../test/components/build.js';

const NOW = Date.parse('2026-01-01T00:00:00.000Z');
const CREATES = 300;
const GETS = 1000;
let counter = 0;

function request(method: string, path: string, body?: unknown): WorldRequest {
  const r: WorldRequest = { surface: 'vendor', method, path, query: '', headers: { 'content-type': 'application/json' }, scope: 'write', requestId: `req_bench${++counter}`, receivedAt: NOW };
  if (body !== undefined) r.body = new TextEncoder().encode(JSON.stringify(body));
  return r;
}

async function open(bundle: TwinBundle): Promise<WorldRunner> {
  return openWorldRunner({ storage: new MemoryStorage(), world: 'bench', twins: [bundle], now: () => NOW });
}

/** µs per request of wall time: `CREATES` creates one after another, then `GETS` gets of one note. */
async function measure(runner: WorldRunner): Promise<{ create: number; get: number }> {
  let id = '';
  let start = performance.now();
  for (let i = 0; i < CREATES; i++) {
    const r = await runner.handle(request('POST', '/notes/v1/notes', { title: `note ${i}`, body: 'Some text to keep.' }));
    if (r.status !== 201) throw new Error(`create answered ${r.status}: ${String(r.body)}`);
    id ||= (JSON.parse(String(r.body)) as { id: string }).id;
  }
  const create = ((performance.now() - start) * 1000) / CREATES;
  start = performance.now();
  for (let i = 0; i < GETS; i++) {
    const r = await runner.handle(request('GET', `/notes/v1/notes/${id}`));
    if (r.status !== 200) throw new Error(`get answered ${r.status}`);
  }
  return { create, get: ((performance.now() - start) * 1000) / GETS };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function engines(rounds: number): Promise<void> {
  const script = await buildTwin(join(COMPONENTS_DIR, 'notes', 'twin.ts'));
  const forms: [string, TwinBundle][] = [
    ['trusted V8', { ...script, trusted: true }],
    ['QuickJS (lane)', { ...script, trusted: false }],
    ['component (lane)', await componentTwin('notes')],
  ];
  const runners = await Promise.all(forms.map(([, bundle]) => open(bundle)));
  // A warm-up round, not counted: first compiles, the lane's worker started.
  for (const runner of runners) await measure(runner);
  const results = forms.map(() => ({ create: [] as number[], get: [] as number[], createRatio: [] as number[], getRatio: [] as number[] }));
  for (let round = 0; round < rounds; round++) {
    const round_: { create: number; get: number }[] = [];
    for (const runner of runners) round_.push(await measure(runner));
    round_.forEach((m, i) => {
      results[i]!.create.push(m.create);
      results[i]!.get.push(m.get);
      results[i]!.createRatio.push(m.create / round_[0]!.create);
      results[i]!.getRatio.push(m.get / round_[0]!.get);
    });
  }
  for (const runner of runners) await runner.close();
  console.log(`notes twin, ${rounds} rounds of ${CREATES} creates and ${GETS} gets each, medians (µs per request of wall time; × trusted V8 in the same round):`);
  console.log('| engine | create µs | × trusted | get µs | × trusted |');
  console.log('|---|---:|---:|---:|---:|');
  forms.forEach(([name], i) => {
    const r = results[i]!;
    console.log(`| ${name} | ${median(r.create).toFixed(1)} | ${median(r.createRatio).toFixed(2)} | ${median(r.get).toFixed(1)} | ${median(r.getRatio).toFixed(2)} |`);
  });
}

/** An edit of the component's source (a comment appended to a copy) to the first answer of the rebuilt component, nothing cached. */
async function rebuild(): Promise<void> {
  const { mkdtemp, cp, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const dir = await mkdtemp(join(tmpdir(), 'kit-notes-'));
  await cp(join(COMPONENTS_DIR, 'notes'), dir, { recursive: true });
  for (let i = 0; i < 3; i++) {
    await appendFile(join(dir, 'component.js'), `\n// edit ${Date.now()} ${i}\n`);
    const t0 = performance.now();
    const bytes = await componentizeTwin(join(dir, 'component.js'), { cacheDir: null });
    const t1 = performance.now();
    const bundle = await loadComponentTwin(bytes, { cacheDir: null });
    const t2 = performance.now();
    const runner = await open(bundle);
    const r = await runner.handle(request('POST', '/notes/v1/notes', { title: 'first' }));
    const t3 = performance.now();
    await runner.close();
    console.log(`edit ${i + 1}: componentize ${(t1 - t0).toFixed(0)} ms, transpile+compile+manifest ${(t2 - t1).toFixed(0)} ms, world open + first answer (${r.status}) ${(t3 - t2).toFixed(0)} ms, total ${(t3 - t0).toFixed(0)} ms`);
  }
  await rm(dir, { recursive: true, force: true });
}

const arg = process.argv[2];
if (arg === 'rebuild') await rebuild();
else await engines(Number(arg ?? 5));
