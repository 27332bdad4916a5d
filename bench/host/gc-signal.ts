/**
 * Preloaded into the host's child process (`node --expose-gc --import <this> kit.js host serve …`):
 * on SIGUSR2, a full garbage collection, then the process's memory written as JSON to the file
 * named by KIT_BENCH_GC_FILE. The host itself is `kit host serve` unchanged; this only lets the
 * bench ask it to collect, so that "RSS once idle worlds closed" is not the garbage V8 has not
 * yet reclaimed.
 */
import { renameSync, writeFileSync } from 'node:fs';

const file = process.env['KIT_BENCH_GC_FILE'];

process.on('SIGUSR2', () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  // Twice: the first pass may only queue finalizers that free more.
  gc?.();
  gc?.();
  if (file === undefined || file === '') return;
  writeFileSync(`${file}.tmp`, JSON.stringify({ collected: gc !== undefined, ...process.memoryUsage() }));
  renameSync(`${file}.tmp`, file);
});
