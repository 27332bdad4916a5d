/**
 * The browser-access bench (bench/access/) in a tiny configuration, so that it cannot rot
 * unnoticed: each part runs as `make bench` runs it (`node dist/bench/access/run.js <part>`), and
 * its figures must describe what it did: every credential's row, every answer a 200 (the bench
 * checks first that a made-up key and a made-up session are refused). No figure is held to a
 * bound: these are not timings. Needs the built tree (`make build`).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { CoreFigures } from '../../bench/access/core.js';
import { CREDENTIALS } from '../../bench/access/credentials.js';
import type { HttpFigures } from '../../bench/access/http.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RUN = join(ROOT, 'dist', 'bench', 'access', 'run.js');
const TINY = {
  KIT_BENCH_ACCESS_TIME: '20',
  KIT_BENCH_ACCESS_CORE_ROUNDS: '2',
  KIT_BENCH_ACCESS_SECONDS: '0.3',
  KIT_BENCH_ACCESS_ROUNDS: '1',
  KIT_BENCH_ACCESS_CONNECTIONS: '2',
  // The parts run at once here: pinning one to a CPU would squeeze the other.
  KIT_BENCH_ACCESS_PIN: '0',
};

const scratch = mkdtempSync(join(tmpdir(), 'kit-bench-access-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs one part; answers the figures it wrote to BENCH_JSON. */
function runPart<T>(part: 'core' | 'http'): Promise<T> {
  expect(existsSync(RUN), `${RUN} is missing: build first (npx tsc -p tsconfig.json)`).toBe(true);
  const json = join(scratch, `${part}.json`);
  const env = { ...process.env, ...TINY, KIT_BENCH_ACCESS_DIR: scratch, BENCH_JSON: json };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [RUN, part], { cwd: ROOT, env, timeout: 110_000 }, (error, stdout, stderr) => {
      if (error !== null) return reject(new Error(`${part} failed: ${error.message}\n${stdout}\n${stderr}`));
      resolve((JSON.parse(readFileSync(json, 'utf8')) as Record<string, T>)[part] as T);
    });
  });
}

describe.concurrent('bench/access in a tiny configuration', () => {
  it('core: every credential judged, dispatched and looked up, each group against its token task', async () => {
    const f = await runPart<CoreFigures>('core');
    const tasks = (group: string): string[] => f.rows.filter((r) => r.group === group).map((r) => r.task);
    expect(tasks('head')).toEqual([...CREDENTIALS]);
    expect(tasks('dispatch')).toEqual([...CREDENTIALS]);
    expect(tasks('lookup')).toEqual(['token', 'read-key', 'write-key', 'session', 'read-key-session']);
    expect(tasks('parts')).toEqual(['sha256-bytes', 'sha256-hex', 'storage-get']);
    for (const r of f.rows) {
      expect(r.medianUs).toBeGreaterThan(0);
      expect(r.samples).toBeGreaterThan(0);
    }
    // Each group's first task is its own baseline.
    for (const group of ['head', 'dispatch', 'lookup', 'parts']) expect(f.rows.find((r) => r.group === group)?.ratio).toBe(1);
    expect(f.rounds).toBe(2);
  }, 120_000);

  it('http: every credential on both servers, every answer a 200, ratios against the token of the same server', async () => {
    const f = await runPart<HttpFigures>('http');
    expect(f.rows.map((r) => `${r.server}/${r.credential}`)).toEqual([...CREDENTIALS.map((c) => `single/${c}`), ...CREDENTIALS.map((c) => `host/${c}`)]);
    for (const r of f.rows) {
      expect(r.bad).toBe(0);
      expect(r.requestsPerSecond).toBeGreaterThan(0);
      expect(r.p99Ms).toBeGreaterThan(0);
      expect(r.rpsRatioPerRound).toHaveLength(1);
    }
    // The server's CPU comes in 10 ms ticks: a run this short may see none (its ratio is then null).
    for (const r of f.rows.filter((x) => x.credential === 'token')) expect(r.ratio).toEqual({ rps: 1, p50: 1, p99: 1, serverCpu: expect.toBeOneOf([1, null]) });
    expect(f.read.single).toMatch(/^GET \/local\/bench\/hello\/v1\/greetings\/grt_/);
    expect(f.read.host).toMatch(/^GET \/bench\/shop\/hello\/v1\/greetings\/grt_/);
    expect(f.commands.single).toContain('server.js world');
    expect(f.commands.host).toContain('host serve');
    expect(f.pinned).toBe(false);
  }, 120_000);
});
