/**
 * The edge variant's benches (bench/edge/) in a tiny configuration, so that they cannot rot
 * unnoticed: each part runs as `make bench` runs it (`node dist/bench/edge/run.js <part>`, the
 * Worker in workerd through miniflare), and its figures must describe what it did. No figure is
 * held to a bound: these are not timings. Needs the built tree with the Worker (`make build`).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { ColdFigures } from '../../bench/edge/cold.js';
import type { MemoryFigures } from '../../bench/edge/memory.js';
import type { PathFigures } from '../../bench/edge/path.js';
import type { StripeFigures } from '../../bench/edge/stripe.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RUN = join(ROOT, 'dist', 'bench', 'edge', 'run.js');
const WORKER = join(ROOT, 'dist', 'edge', 'worker.js');
const TINY = {
  KIT_BENCH_EDGE_SECONDS: '0.5',
  KIT_BENCH_EDGE_ROUNDS: '1',
  KIT_BENCH_EDGE_CONNECTIONS: '2',
  // The parts run at once here: pinning one to a CPU would squeeze the others.
  KIT_BENCH_EDGE_PIN: '0',
  KIT_BENCH_EDGE_RESTARTS: '2',
  KIT_BENCH_EDGE_FRESH: '2',
  KIT_BENCH_EDGE_WARM: '2',
  KIT_BENCH_EDGE_SAMPLES: '3',
  KIT_BENCH_EDGE_WORLDS: '2,4',
  KIT_BENCH_EDGE_CONCURRENCY: '2',
  KIT_BENCH_EDGE_IDLE: '1',
  KIT_BENCH_EDGE_EVERY: '1',
  KIT_BENCH_EDGE_PROBE: '2',
};

const scratch = mkdtempSync(join(tmpdir(), 'kit-bench-edge-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs one part; answers the figures it wrote to BENCH_JSON. */
function runPart<T>(part: 'stripe' | 'cold' | 'path' | 'memory'): Promise<T> {
  expect(existsSync(RUN), `${RUN} is missing: build first (npx tsc -p tsconfig.json)`).toBe(true);
  expect(existsSync(WORKER), `${WORKER} is missing: build the Worker first (node dist/host/edge/build.js)`).toBe(true);
  const json = join(scratch, `${part}.json`);
  const env = { ...process.env, ...TINY, KIT_BENCH_EDGE_DIR: scratch, BENCH_JSON: json };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [RUN, part], { cwd: ROOT, env, timeout: 110_000 }, (error, stdout, stderr) => {
      if (error !== null) return reject(new Error(`${part} failed: ${error.message}\n${stdout}\n${stderr}`));
      resolve((JSON.parse(readFileSync(json, 'utf8')) as Record<string, T>)[part] as T);
    });
  });
}

// Concurrently: each part waits mostly on workerd's start and on the loopback.
describe.concurrent('bench/edge in a tiny configuration', () => {
  it('stripe: the floor, then retrieve and create on both servers, every answer a 2xx, and their ratios', async () => {
    const f = await runPart<StripeFigures>('stripe');
    expect(f.rows.map((r) => `${r.request}/${r.server}`)).toEqual(['hello/hello', 'retrieve/edge', 'retrieve/single', 'create/edge', 'create/single']);
    for (const r of f.rows) {
      expect(r.non2xx).toBe(0);
      expect(r.requestsPerSecond).toBeGreaterThan(0);
      expect(r.p99Ms).toBeGreaterThan(0);
    }
    expect(f.ratios.map((r) => r.request)).toEqual(['retrieve', 'create']);
    for (const r of f.ratios) {
      expect(r.rps).toBeGreaterThan(0);
      expect(r.edgeOverHello).toBeGreaterThan(0);
      expect(r.rpsPerRound).toHaveLength(1);
    }
    expect(f.pinned).toBe(false);
    expect(f.vendors).toContain('stripe');
    expect(f.commands.single).toContain('server.js world');
  }, 120_000);

  it('cold: every restart timed with both first requests, and the fresh families', async () => {
    const f = await runPart<ColdFigures>('cold');
    expect(f.restarts).toBe(2);
    for (const s of [f.restartMs, f.firstMs, f.otherFamilyMs, f.warmMs]) expect(s.median).toBeGreaterThan(0);
    expect(f.ratio.first).toBeGreaterThan(0);
    expect(f.fresh.samples).toBe(2);
    for (const s of [f.fresh.postMs, f.fresh.firstCreateMs, f.fresh.secondCreateMs, f.fresh.retrieveMs]) expect(s.median).toBeGreaterThan(0);
    expect(f.command).toContain('persist');
  }, 120_000);

  it('path: the floor, the Worker alone, the Worker and the index, a warm world, each with the status it expects', async () => {
    const f = await runPart<PathFigures>('path');
    expect(f.rows.map((r) => [r.id, r.status])).toEqual([['hello', 200], ['worker', 401], ['index', 404], ['world', 200]]);
    for (const r of f.rows) expect(r.medianMs).toBeGreaterThan(0);
    expect(f.samples).toBe(3);
  }, 120_000);

  it('memory: workerd read at start, at RSS_0, at each step and idle; the probed worlds still open after a second', async () => {
    const f = await runPart<MemoryFigures>('memory');
    expect(f.readings.map((r) => [r.worlds, r.idleSeconds === null])).toEqual([[0, true], [0, true], [2, true], [4, true], [4, false]]);
    for (const r of f.readings) expect(r.rssMiB).toBeGreaterThan(0);
    expect(f.readings.slice(0, 2).map((r) => r.perWorldKiB)).toEqual([null, null]);
    for (const r of f.readings.slice(2)) expect(typeof r.perWorldKiB).toBe('number');
    expect(f.make.map((m) => m.worlds)).toEqual([2, 4]);
    // A family closes a world after 60 s without a request: one second is not that.
    expect(f.probe).toMatchObject({ worlds: 2, open: 2 });
    expect(f.probe.firstMs).toBeGreaterThan(0);
  }, 120_000);
});
