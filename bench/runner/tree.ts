/**
 * A built tree's Stripe twin served in-process on LMDB in a temporary directory, loaded from
 * that tree's `dist/`: the A/B benchmarks of this folder run the same script against this
 * tree and a git worktree of another commit.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorldRunner, WorldRunnerOptions } from '../../runtime/runner/index.js';

export interface TreeRunner {
  runner: WorldRunner;
  /** Closes the world and its storage and removes the directory. */
  close(): Promise<void>;
}

export async function openTreeStripeRunner(root: string, world: string, webhooks?: WorldRunnerOptions['webhooks']): Promise<TreeRunner> {
  const { openLmdbStorage } = (await import(join(root, 'dist/runtime/store/index.js'))) as typeof import('../../runtime/store/index.js');
  const { openWorldRunner } = (await import(join(root, 'dist/runtime/runner/index.js'))) as typeof import('../../runtime/runner/index.js');
  const { loadBuiltinTwins } = (await import(join(root, 'dist/sdk/twin/build.js'))) as typeof import('../../sdk/twin/build.js');
  const twin = (await loadBuiltinTwins()).get('stripe');
  if (!twin) throw new Error(`no built-in Stripe twin in ${root}`);
  const dir = mkdtempSync(join(tmpdir(), `kit-${world}-`));
  const runner = await openWorldRunner({ storage: openLmdbStorage(dir), world, twins: [twin], ...(webhooks ? { webhooks } : {}) });
  return {
    runner,
    async close() {
      await runner.close();
      await runner.storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
