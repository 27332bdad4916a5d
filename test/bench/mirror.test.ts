/**
 * The mirror's bench (bench/mirror/first-paint.ts) in a tiny configuration, so that it cannot
 * rot unnoticed: run as `make bench` runs it, its figures must describe what it did, and its
 * loads must have read one page whatever the world's size. No figure is held to a time bound.
 * Needs the built tree (`npx tsc -p tsconfig.json`, `node pages/build.mjs`) and Chromium.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { MirrorFigures } from '../../bench/mirror/first-paint.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RUN = join(ROOT, 'dist', 'bench', 'mirror', 'first-paint.js');
const scratch = mkdtempSync(join(tmpdir(), 'kit-bench-mirror-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('bench/mirror in a tiny configuration', () => {
  it('times the first paint of each world, each load reading one page of the Stripe API', async () => {
    expect(existsSync(RUN), `${RUN} is missing: build first (npx tsc -p tsconfig.json)`).toBe(true);
    const json = join(scratch, 'mirror.json');
    const env = { ...process.env, KIT_BENCH_MIRROR_SIZES: '3,45', KIT_BENCH_MIRROR_ROUNDS: '2', BENCH_JSON: json };
    await new Promise<void>((resolve, reject) => {
      execFile(process.execPath, [RUN], { cwd: ROOT, env, timeout: 120_000 }, (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`first-paint failed: ${error.message}\n${stdout}\n${stderr}`));
        else resolve();
      });
    });
    const figures = JSON.parse(readFileSync(json, 'utf8')) as MirrorFigures;
    expect(figures.rounds).toBe(2);
    expect(figures.rows.map((r) => r.customers)).toEqual([3, 45]);
    for (const row of figures.rows) {
      expect(row.firstPaintMs.median).toBeGreaterThan(0);
      expect(row.vendorRequests).toBe(1);
    }
    // More customers than one page cost the first screen no more requests.
    expect(figures.rows[1]!.requests).toBe(figures.rows[0]!.requests);
    expect(figures.ratio).toBeCloseTo(figures.rows[1]!.firstPaintMs.median / figures.rows[0]!.firstPaintMs.median, 6);
  }, 180_000);
});
