/**
 * The changesets bench (bench/changesets/) in a tiny configuration, so that it cannot rot
 * unnoticed: run as `make bench` runs it (`node dist/bench/changesets/run.js`, three worlds each
 * served as `kit world serve` serves it), and the figures must describe what it did: every phase
 * in order, each with a wall time and the CPU of the processes that did its work (the deploy's
 * at main and at the real world), ratios against the creates of the same run. The bench itself
 * fails unless the cut holds every change, the push appends them all, the check passes, and the
 * real world holds every customer afterwards. No figure is held to a time bound. Needs the built
 * tree (`npx tsc -p tsconfig.json`).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { ChangesetFigures } from '../../bench/changesets/flow.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RUN = join(ROOT, 'dist', 'bench', 'changesets', 'run.js');
const CHANGES = 12;

const scratch = mkdtempSync(join(tmpdir(), 'kit-bench-changesets-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('bench/changesets in a tiny configuration', () => {
  it('cuts, pushes, verifies, approves and deploys every change, each phase measured against the creates', async () => {
    expect(existsSync(RUN), `${RUN} is missing: build first (npx tsc -p tsconfig.json)`).toBe(true);
    const json = join(scratch, 'changesets.json');
    const env = { ...process.env, KIT_BENCH_CHANGESETS_CHANGES: String(CHANGES), KIT_BENCH_CHANGESETS_DIR: scratch, BENCH_JSON: json };
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, [RUN], { cwd: ROOT, env, timeout: 110_000 }, (error, out, stderr) => {
        if (error !== null) reject(new Error(`changesets failed: ${error.message}\n${out}\n${stderr}`));
        else resolve(out);
      });
    });
    const { flow, load } = JSON.parse(readFileSync(json, 'utf8')) as { flow: ChangesetFigures; load: { flow?: [number, number] } };

    expect(flow.changes).toBe(CHANGES);
    expect(flow.root).toBe('http://127.0.0.1:<port>/local/real/stripe');
    expect(flow.origin).toBe('http://127.0.0.1:<port>/local/main');
    expect(flow.create.meanMs).toBeGreaterThan(0);
    expect(flow.create.p99Ms).toBeGreaterThanOrEqual(flow.create.p50Ms);
    expect(flow.changesetBytes).toBeGreaterThan(CHANGES * 500);
    expect(flow.phases.map((p) => p.phase)).toEqual(['cut', 'push', 'verify', 'approve', 'deploy']);
    for (const p of flow.phases) {
      expect(p.wallMs, p.phase).toBeGreaterThan(0);
      expect(p.cpuMs.total, p.phase).toBe(p.cpuMs.dev + p.cpuMs.main + p.cpuMs.real);
      expect(p.perChange.wallMs, p.phase).toBeCloseTo(p.wallMs / CHANGES, 2);
      expect(p.ratio.wall, p.phase).toBeGreaterThan(0);
    }
    const deploy = flow.phases.find((p) => p.phase === 'deploy')!;
    // The deploy's work is main's (sending) and the real world's (the creates).
    expect(deploy.cpuMs.main + deploy.cpuMs.real).toBeGreaterThan(0);
    expect(flow.total.wallMs).toBeCloseTo(flow.phases.reduce((s, p) => s + p.wallMs, 0), 0);
    expect(load.flow).toHaveLength(2);
    expect(stdout).toContain(`### ${CHANGES} changes through a changeset`);
  }, 120_000);
});
