import { defineConfig } from 'vitest/config';

/**
 * The benchmarks in a tiny configuration (test/bench/), so that they cannot rot: run by
 * `make bench` before the benchmarks themselves, not by `make test`, which must stay under CI's
 * 15 minutes (they took about 48 s of it).
 */
export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    include: ['test/bench/**/*.test.ts'],
  },
});
