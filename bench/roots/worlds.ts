/**
 * The worlds both parts use, started once per run: the "real" account (n customers) and the copy,
 * each in a process of its own, and the refresh part's baseline world, empty, in the real
 * account's process (the stand-in vendor's: it is idle while the copy refreshes, and the real
 * account while the baseline is written; one process fewer to start). The refresh part needs a
 * copy never rooted (it times the first refresh); the request part a copy rooted and refreshed,
 * which the refresh part leaves behind, so that a whole run seeds and copies the n customers
 * once. They live in a scratch folder of their own (the parts' folders are removed after each
 * part).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { expectStatus, rootAt, startWorldServer, startWorldServers, worldApi, type WorldServer } from './servers.js';

export interface Pair {
  real: WorldServer;
  copy: WorldServer;
  /** Empty until the refresh part writes it; in the real account's process. */
  baseline: WorldServer;
}

export class Worlds {
  private started: Promise<Pair> | null = null;
  private rooted = false;
  private dirs: string[] = [];

  constructor(
    private readonly parent: string,
    readonly customers: number,
    private readonly log: (line: string) => void,
  ) {}

  /** A pair whose copy has no root yet (a used one is stopped and another started). */
  async fresh(): Promise<Pair> {
    if (this.rooted) await this.close();
    return this.pair();
  }

  /** A pair whose copy is rooted at the real account and refreshed (done here when it is not). */
  async refreshed(): Promise<Pair> {
    const pair = await this.pair();
    if (!this.rooted) {
      await rootAt(pair.copy, pair.real);
      expectStatus(await worldApi(pair.copy, 'POST', '/twins/stripe/refresh'), 200, 'POST …/twins/stripe/refresh');
      this.rooted = true;
    }
    return pair;
  }

  /** Says the copy was rooted and refreshed (by the refresh part). */
  markRefreshed(): void {
    this.rooted = true;
  }

  private pair(): Promise<Pair> {
    if (this.started === null) {
      const dir = mkdtempSync(join(this.parent, 'kit-bench-roots-worlds-'));
      this.dirs.push(dir);
      this.log(`bench roots: starting the real world (${this.customers} customers) with the baseline world, and the copy`);
      // The baseline first: it listens at once, and the real account's seeding follows in the same process.
      const vendor = startWorldServers([
        { dir: join(dir, 'baseline'), world: 'baseline', customers: 0 },
        { dir: join(dir, 'real'), world: 'real', customers: this.customers },
      ]);
      const copy = startWorldServer(join(dir, 'copy'), 'copy', 0);
      this.started = Promise.allSettled([vendor, copy]).then(async ([v, c]) => {
        if (v.status === 'fulfilled' && c.status === 'fulfilled') return { baseline: v.value[0]!, real: v.value[1]!, copy: c.value };
        if (v.status === 'fulfilled') await v.value[0]!.stop();
        if (c.status === 'fulfilled') await c.value.stop();
        throw (v.status === 'rejected' ? v.reason : (c as PromiseRejectedResult).reason) as Error;
      });
    }
    return this.started;
  }

  async close(): Promise<void> {
    const started = this.started;
    this.started = null;
    this.rooted = false;
    if (started !== null) {
      const pair = await started.catch(() => null);
      if (pair !== null) await Promise.all([pair.real.stop(), pair.copy.stop()]);
    }
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}
