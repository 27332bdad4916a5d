import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleForNode } from '../../test/helpers/bundle.js';
import { WorldStore } from '../world/world.js';
import { openLmdbStorage } from './lmdb.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs the child until it has acknowledged at least `ackTarget` positions, then SIGKILLs it. */
async function runAndKill(source: string, dir: string, ackTarget: number): Promise<number[]> {
  const child = spawn(process.execPath, ['--input-type=module'], {
    cwd: repo,
    env: { ...process.env, KIT_CRASH_DIR: dir },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end(source);
  const acked: number[] = [];
  let pending = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolvePromise, reject) => {
    let killed = false;
    child.stdout.on('data', (d: Buffer) => {
      pending += d.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) acked.push(Number(line));
      if (!killed && acked.length >= ackTarget) {
        killed = true;
        // Mid-stream: the child is committing and syncing more bursts right now.
        child.kill('SIGKILL');
      }
    });
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolvePromise(acked);
      else reject(new Error(`child exited (${code}) before it was killed: ${stderr}`));
    });
  });
}

describe('durability under SIGKILL', () => {
  it('keeps every acknowledged entry, intact, and no partial one', async () => {
    const source = await bundleForNode(join(here, 'durability.child.ts'));
    const dir = mkdtempSync(join(tmpdir(), 'kit-crash-'));
    dirs.push(dir);
    const rounds = [300, 200, 400];
    let allAcked: number[] = [];
    for (const target of rounds) {
      const acked = await runAndKill(source, dir, target);
      expect(acked.length).toBeGreaterThanOrEqual(target);
      allAcked = allAcked.concat(acked);

      // Reopen and check what survived.
      const storage = openLmdbStorage(dir);
      try {
        const world = new WorldStore(storage).openWorld('crash');
        const head = world.head('log');
        const maxAcked = Math.max(...allAcked);
        expect(head).toBeGreaterThanOrEqual(maxAcked);
        if (process.env.KIT_CRASH_VERBOSE) console.log(`acked ${allAcked.length}, max acked ${maxAcked}, head after reopen ${head}`);

        // Contiguous positions 1..head, each entry complete: every write it recorded is in the
        // tree at its position, and the records it wrote carry its position.
        let expected = 1;
        let after = 0;
        for (;;) {
          const page = world.log('log', { after, limit: 1000 });
          for (const entry of page.entries) {
            expect(entry.position).toBe(expected);
            expect(entry.writes).toHaveLength(7);
            for (const w of entry.writes) {
              expect(world.getRecord('log', w.type, w.id, entry.position)).toEqual(w.value);
              expect((w.value as { position: number }).position).toBe(entry.position);
            }
            expected++;
          }
          if (page.next === null) break;
          after = page.next;
        }
        expect(expected - 1).toBe(head);
        for (const p of allAcked) expect(world.entry('log', p)?.position).toBe(p);
        // Derived state agrees with the log: the tip is the head, counts match the records.
        expect(world.getRecord('log', 'tip', 'tip')).toEqual({ position: head });
        expect(world.countRecords('log', 'rec')).toBe(head * 6);
        // Nothing was written beyond the head (no record version of a lost entry).
        const beyond = [...storage.range({ start: ['w1', 'log', 'log', head + 1], end: ['w1', 'log', 'log\u0000'] })];
        expect(beyond).toEqual([]);
        expect(world.getRecord('log', 'rec', `p${head + 1}_k0`)).toBeUndefined();
      } finally {
        await storage.close();
      }
    }
  }, 60_000);
});
