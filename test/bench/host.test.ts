/**
 * The multi-world host's benches (bench/host/) in a tiny configuration, so that they cannot rot
 * unnoticed: each part runs as `make bench` runs it (`node dist/bench/host/run.js <part>`, the
 * host in a child process), and its figures must describe what it did. No figure is held to a
 * bound: these are not timings. Needs the built tree (`make build`).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { BranchFigures } from '../../bench/host/branches.js';
import type { IsolationFigures } from '../../bench/host/isolation.js';
import type { ManyWorldsFigures } from '../../bench/host/many-worlds.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RUN = join(ROOT, 'dist', 'bench', 'host', 'run.js');
const TINY = {
  KIT_BENCH_HOST_SMALL: '20',
  KIT_BENCH_HOST_BIG: '100',
  KIT_BENCH_HOST_BRANCHES: '2',
  KIT_BENCH_HOST_WORLDS: '5',
  KIT_BENCH_HOST_COLD: '2',
  KIT_BENCH_HOST_IDLE: '1',
  KIT_BENCH_HOST_SETTLE: '1',
  KIT_BENCH_HOST_SECONDS: '0.5',
  KIT_BENCH_HOST_ROUNDS: '1',
  KIT_BENCH_HOST_ATTACKERS: '1',
  KIT_BENCH_HOST_RUNAWAYS: 'loop',
};

const scratch = mkdtempSync(join(tmpdir(), 'kit-bench-host-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs one part; answers the figures it wrote to BENCH_JSON. */
function runPart<T>(part: 'branches' | 'worlds' | 'isolation'): Promise<T> {
  expect(existsSync(RUN), `${RUN} is missing: build first (npx tsc -p tsconfig.json)`).toBe(true);
  const json = join(scratch, `${part}.json`);
  const env = { ...process.env, ...TINY, KIT_BENCH_HOST_DIR: scratch, BENCH_JSON: json };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [RUN, part], { cwd: ROOT, env, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error !== null) return reject(new Error(`${part} failed: ${error.message}\n${stdout}\n${stderr}`));
      resolve((JSON.parse(readFileSync(json, 'utf8')) as Record<string, T>)[part] as T);
    });
  });
}

// Concurrently: each part waits mostly on its host's start and on timers.
describe.concurrent('bench/host in a tiny configuration', () => {
  it('branches: both parents hold their entries, and every branch listed their customers', async () => {
    const f = await runPart<BranchFigures>('branches');
    expect(f.small.entries).toBe(20);
    expect(f.big.entries).toBe(100);
    expect([f.small.samples, f.big.samples]).toEqual([2, 2]);
    for (const p of [f.small, f.big]) {
      for (const ms of [p.postMs, p.firstReadMs, p.totalMs, p.secondReadMs]) expect(ms).toBeGreaterThan(0);
    }
    expect(f.ratio.total).toBeGreaterThan(0);
    expect(f.command).toContain('kit.js host serve');
  }, 60_000);

  it('worlds: every world was open after it answered, none once idle, and closed ones answered again', async () => {
    const f = await runPart<ManyWorldsFigures>('worlds');
    expect(f.worlds).toBe(5);
    expect(f.memory.started.open).toBe(0);
    expect(f.memory.allOpen.open).toBe(5);
    expect(f.memory.idleClosed.open).toBe(0);
    expect(f.memory.settled.open).toBe(0);
    expect(f.gcForced).toBe(true);
    expect(f.memory.allOpen.rssMiB).toBeGreaterThan(0);
    expect(f.samples).toBe(2);
    expect(f.coldFirstMs.median).toBeGreaterThan(0);
    expect(f.commands.idle).toContain('--idle 1');
  }, 60_000);

  it("isolation: the reader's answers were all 2xx, and the runaway world answered only handler timeouts", async () => {
    const f = await runPart<IsolationFigures>('isolation');
    expect(f.rows.map((r) => r.id)).toEqual(['alone', 'loop']);
    for (const r of f.rows) {
      expect(r.non2xx).toBe(0);
      expect(r.p99Ms).toBeGreaterThan(0);
    }
    const loop = f.rows[1]!.runaway!;
    expect(loop.answers).toBeGreaterThan(0);
    expect(Object.keys(loop.statuses)).toEqual(['500']);
    expect(loop.sample).toContain('handler_timeout');
  }, 60_000);
});
