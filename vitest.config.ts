import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the CPUs: one on CI's two, where most tests wait on
    // sockets, child processes and timers. Two there took the suite from 13.6 to 8.1 minutes.
    maxWorkers: Math.max(2, availableParallelism()),
    projects: [
      // Every test, as always, but the benchmarks' smoke runs (test/bench/: vitest.bench.config.ts, `make bench`)
      // and the twin template's node:test files (kit twin test runs them: sdk/cli/twin-commands.test.ts).
      { extends: true, test: { name: 'default', include: ['{runtime,host,sdk,twins,test}/**/*.test.ts'], exclude: ['test/bench/**', '**/node_modules/**', 'sdk/twin/template/**'] } },
      // The Stripe SDK and Octokit conformance suites once more, against the edge variant (the
      // built dist/edge/ in workerd through miniflare; the harnesses' edge mode, test/README.md).
      // The twins' other tests beside them in test/ build the bundle or serve it in-process: not edge tests.
      {
        extends: true,
        test: {
          name: 'edge',
          include: ['twins/stripe/test/**/*.test.ts', 'twins/github/test/**/*.test.ts'],
          exclude: [
            ...['coverage', 'determinism', 'known-params', 'limits', 'lists', 'root', 'scalars', 'shapes', 'stores', 'webhooks'].map((t) => `twins/stripe/test/${t}.test.ts`),
            ...['coverage', 'root', 'stores'].map((t) => `twins/github/test/${t}.test.ts`),
            '**/node_modules/**',
          ],
          env: { STRIPE_TWIN_HARNESS: 'edge', GITHUB_TWIN_HARNESS: 'edge' },
        },
      },
    ],
  },
});
