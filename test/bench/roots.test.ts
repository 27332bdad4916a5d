/**
 * The roots bench (bench/roots/) in a tiny configuration, so that it cannot rot unnoticed: both
 * parts run as `make bench` runs them (`node dist/bench/roots/run.js`, three worlds each served
 * as `kit world serve` serves it), and the figures must describe what they did: the copy holds
 * every customer, the unchanged refresh wrote nothing, the throttle answered 429 with
 * Retry-After, every load's answer was a 200, the root's header came and went. No figure is held
 * to a time bound. Needs the built tree (`npx tsc -p tsconfig.json`).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { RefreshFigures } from '../../bench/roots/refresh.js';
import type { RequestFigures } from '../../bench/roots/request.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RUN = join(ROOT, 'dist', 'bench', 'roots', 'run.js');
const CUSTOMERS = 30;
const TINY = {
  KIT_BENCH_ROOTS_CUSTOMERS: String(CUSTOMERS),
  KIT_BENCH_ROOTS_SECONDS: '0.2',
  KIT_BENCH_ROOTS_WARMUP: '0',
  KIT_BENCH_ROOTS_ROUNDS: '1',
  KIT_BENCH_ROOTS_CONNECTIONS: '2',
  KIT_BENCH_ROOTS_PIN: '0',
};

const scratch = mkdtempSync(join(tmpdir(), 'kit-bench-roots-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('bench/roots in a tiny configuration', () => {
  it('refreshes a copy of every customer, refuses a third refresh, and loads the rooted and unrooted GET, status and clock', async () => {
    expect(existsSync(RUN), `${RUN} is missing: build first (npx tsc -p tsconfig.json)`).toBe(true);
    const json = join(scratch, 'roots.json');
    const env = { ...process.env, ...TINY, KIT_BENCH_ROOTS_DIR: scratch, BENCH_JSON: json };
    await new Promise<void>((resolve, reject) => {
      execFile(process.execPath, [RUN], { cwd: ROOT, env, timeout: 110_000 }, (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`roots failed: ${error.message}\n${stdout}\n${stderr}`));
        else resolve();
      });
    });
    const { refresh, request } = JSON.parse(readFileSync(json, 'utf8')) as { refresh: RefreshFigures; request: RequestFigures };

    expect(refresh.copiedCustomers).toBe(CUSTOMERS);
    // The account, one page of customers, then the six other lists, each empty.
    expect(refresh.first.report).toMatchObject({ ok: true, reads: 8, deleted: 0 });
    expect(refresh.first.written.entries).toBe(refresh.first.report.entries);
    expect(refresh.first.written.markerWrites).toBe(refresh.first.report.written);
    expect(refresh.first.written.fileBytes).toBeGreaterThan(0);
    expect(refresh.first.written.logJsonBytes).toBeGreaterThan(0);
    expect(refresh.unchanged.report).toMatchObject({ ok: true, reads: 8, entries: 0, written: 0 });
    expect(refresh.unchanged.written).toMatchObject({ entries: 0, writes: 0, fileBytes: 0 });
    expect(refresh.throttled).toMatchObject({ status: 429, code: 'refresh_throttled', wroteEntries: 0, fileBytes: 0 });
    expect(refresh.throttled.retryAfterS).toBeGreaterThan(0);
    expect(refresh.baseline.written.entries).toBe(CUSTOMERS);
    expect(refresh.reads).toMatchObject({ pages: 1 });
    expect(refresh.root).toBe('http://127.0.0.1:<port>/local/real/stripe');
    for (const x of [refresh.ratio.wall, refresh.ratio.fileBytes, refresh.ratio.logJsonBytes]) expect(x).toBeGreaterThan(0);

    expect(request.rows.map((r) => r.kind)).toEqual(['rooted', 'unrooted', 'status', 'clock']);
    for (const r of request.rows) {
      expect(r.bad).toBe(0);
      expect(r.requestsPerSecond).toBeGreaterThan(0);
      expect(r.rpsRatioPerRound).toHaveLength(1);
    }
    for (const kind of ['unrooted', 'clock']) expect(request.rows.find((r) => r.kind === kind)?.ratio.rps).toBe(1);
    expect(request.observedAtHeader).toMatch(/^x-kit-observed-at: \d{4}-\d\d-\d\dT/);
    expect(request.answerBytes.rooted).toBeGreaterThan(request.answerBytes.unrooted);
    // One round ends unrooted: the copy is rooted again (and refreshed, writing nothing) after it.
    expect(request.rerootMs).toHaveLength(1);
    expect(request.pinned).toBe(false);
  }, 120_000);
});
