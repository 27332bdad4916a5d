/**
 * A bench's figures as JSON, beside the table it prints: written only when the environment names
 * a file (`BENCH_JSON`, set by bench/run.ts for each benchmark it runs), which `make bench` then
 * merges into bench/results/latest.json. Run alone, a bench prints its table and writes nothing.
 */
import { writeFileSync } from 'node:fs';

export function writeBenchJson(data: unknown): void {
  const file = process.env.BENCH_JSON;
  if (file === undefined || file === '') return;
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
}
