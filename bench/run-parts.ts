/**
 * The frame of a bench made of parts (bench/edge/run.ts, bench/access/run.ts): its settings from
 * `KIT_BENCH_<NAME>_*`, the parts asked for on the command line (all by default), each run in a
 * scratch folder of its own with the machine's load average before and after it (the machine is
 * shared), then the figures written for `make bench` (`writeBenchJson`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeBenchJson } from './results/json.js';

export const log = (line: string): void => void process.stderr.write(`${line}\n`);
export const fixed = (x: number | null | undefined, digits = 2): string => (x === null || x === undefined ? '–' : x.toFixed(digits));

/** `setting(name, fallback)`: a whole number of at least `min` from `KIT_BENCH_<BENCH>_<name>`, or `fallback`; `fraction`: any number of at least 0.2. */
export function settingsOf(bench: string): (name: string, fallback: number, options?: { fraction?: boolean; min?: number }) => number {
  return (name, fallback, { fraction = false, min = 1 } = {}) => {
    const variable = `KIT_BENCH_${bench}_${name}`;
    const raw = process.env[variable];
    const value = raw === undefined || raw === '' ? fallback : Number(raw);
    const ok = fraction ? Number.isFinite(value) && value >= 0.2 : Number.isInteger(value) && value >= min;
    if (!ok) throw new Error(`${variable} must be ${fraction ? 'a number of at least 0.2' : `a whole number of at least ${min}`}, got ${raw}`);
    return value;
  };
}

/** The figures every such bench writes besides its parts'. */
export interface PartsFigures<Part extends string> {
  node: string;
  nproc: number;
  /** Each part's 1-minute load average before and after it (the machine is shared). */
  load: Partial<Record<Part, [number, number]>>;
}

/**
 * Runs the parts asked for in `process.argv` (every one of `parts` when none is), each given a
 * scratch folder under `KIT_BENCH_<BENCH>_DIR` (default the system's), then writes `figures`.
 */
export async function runParts<Part extends string, F extends PartsFigures<Part>>(
  bench: string,
  parts: readonly Part[],
  figures: Omit<F, keyof PartsFigures<Part>>,
  run: (part: Part, dir: string, figures: F) => Promise<void>,
): Promise<void> {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((w) => !(parts as readonly string[]).includes(w));
  if (unknown.length > 0) throw new Error(`unknown part ${unknown.join(', ')}; choose from ${parts.join(', ')}`);
  const chosen = (wanted.length === 0 ? parts : wanted) as readonly Part[];
  const parent = process.env[`KIT_BENCH_${bench}_DIR`] || tmpdir();
  const all = { ...figures, node: process.version, nproc: availableParallelism(), load: {} } as F;
  const name = bench.toLowerCase();
  for (const part of chosen) {
    const dir = mkdtempSync(join(parent, `kit-bench-${name}-${part}-`));
    const loadBefore = loadavg()[0] as number;
    try {
      await run(part, dir, all);
      all.load[part] = [Number(loadBefore.toFixed(2)), Number((loadavg()[0] as number).toFixed(2))];
      log(`bench ${name}: ${part} done; load average ${loadBefore.toFixed(2)} before, ${(loadavg()[0] as number).toFixed(2)} after`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  writeBenchJson(all);
}
