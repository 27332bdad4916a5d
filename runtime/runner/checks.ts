/**
 * A world's checks: JavaScript exporting `check` (or default) as `{ name, run(entry, tree) }`,
 * each loaded in a context of its own, with a QuickJS runtime and memory limit of its own, in
 * the world's check lane (a worker thread under a watchdog), with nothing of the world but the
 * entry and a read-only tree. Kept in storage; run over entries by `run` (the changeset flow —
 * verify, deploy — runs every check over every entry it carries).
 */
import { KitError } from '../errors.js';
import { checkRunInput, compileCheck, readCheckName, readCheckVerdict } from '../checks/index.js';
import { prefixEnd } from '../store/keys.js';
import type { Entry } from '../world/types.js';
import { treeHostCall } from './twins.js';
import type { CheckHost, CheckService } from './services.js';

interface StoredCheck {
  source: string;
  script: string;
  /** The name the check itself declares. */
  declared: string;
  updatedAt: string;
}

export interface CheckResult {
  check: string;
  pass: boolean;
  failures: string[];
}

const CHECK_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
/**
 * Checks one world keeps. Every entry is run past every check before it is performed, each in
 * its own sandbox context, so their number bounds what a write costs and what the sandbox holds.
 */
export const MAX_CHECKS = 100;
const MIB = 1024 * 1024;
/** What one check may use while it loads or runs: its own runtime's limit. */
export const CHECK_MEMORY_BYTES = 16 * MIB;
/**
 * What one check may keep between runs (its code, its constants). A check is a few functions:
 * one that keeps more (a table of 30 MB built at its top level) is refused, so that no check
 * takes the room of the others.
 */
export const CHECK_KEEPS_BYTES = MIB;
/**
 * The check lane's memory: the instance's own 16 MiB, every check keeping its most (with half a
 * MiB for its runtime and context), one running at its most, and 16 MiB of slack.
 */
export const CHECKS_LANE_MEMORY_BYTES = 16 * MIB + MAX_CHECKS * (CHECK_KEEPS_BYTES + MIB / 2) + CHECK_MEMORY_BYTES + 16 * MIB;

export class CheckSet implements CheckService {
  private readonly checks = new Map<string, StoredCheck>();

  constructor(private readonly runner: CheckHost) {}

  /** Loads the stored checks again (a runner starting); one that no longer loads is reported and left out. */
  async restore(): Promise<void> {
    const stored = [...this.runner.storage.range<StoredCheck>({ start: this.prefix(), end: prefixEnd(this.prefix()) })];
    for (const { key, value } of stored) {
      const name = String(key[key.length - 1]);
      const failed = await this.load(name, value.script);
      if (failed === null) this.checks.set(name, value);
      else console.error(`twinkit: the stored check '${name}' of world ${this.runner.name} no longer loads and does not run: ${failed}`);
    }
  }

  private prefix(): string[] {
    return ['#runner', this.runner.name, 'check'];
  }

  private context(name: string): string {
    return `check:${name}`;
  }

  /** Loads a compiled check in a runtime of its own; answers why it failed, or null. */
  private async load(name: string, script: string): Promise<string | null> {
    const loaded = await this.runner.checkLane.load(this.context(name), script, { hostCall: true, memoryBytes: CHECK_MEMORY_BYTES });
    if ('error' in loaded) return loaded.error.message;
    return null;
  }

  /** The name the loaded check declares, and that it keeps no more than its share; else it is unloaded and refused. */
  private async vet(name: string): Promise<string> {
    const lane = this.runner.checkLane;
    const r = await lane.call(this.context(name), '__kit_check_name', '');
    if ('error' in r) {
      await lane.unload(this.context(name));
      throw new KitError('invalid_check', `The check does not load: ${r.error.message}`);
    }
    const keeps = await lane.memoryUsed(this.context(name));
    if (keeps !== null && keeps > CHECK_KEEPS_BYTES) {
      await lane.unload(this.context(name));
      throw new KitError('invalid_check', `The check keeps ${(keeps / MIB).toFixed(1)} MiB once loaded; a check may keep at most ${CHECK_KEEPS_BYTES / MIB} MiB between runs (build large tables inside run, not at the top level).`, { bytes: keeps, limit: CHECK_KEEPS_BYTES });
    }
    return readCheckName(r.ok);
  }

  list(): { name: string; declared: string; updatedAt: string; bytes: number }[] {
    return [...this.checks].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, c]) => ({ name, declared: c.declared, updatedAt: c.updatedAt, bytes: c.source.length }));
  }

  get(name: string): StoredCheck {
    const c = this.checks.get(name);
    if (!c) throw new KitError('unknown_check', `This world has no check '${name}'.`);
    return c;
  }

  /** Stores a check; a source that does not parse or exports no check is refused and nothing changes. */
  async put(name: string, source: string): Promise<{ name: string; declared: string; updatedAt: string }> {
    if (!CHECK_NAME.test(name)) throw new KitError('invalid_check', 'A check name matches ^[a-z0-9][a-z0-9._-]{0,63}$.', { param: 'name' });
    this.roomFor(name);
    if (source.trim() === '') throw new KitError('invalid_check', 'Send the check as JavaScript exporting `check` (or default) as { name, run(entry, tree) }.');
    const { script } = await compileCheck(source);
    // One change to the set at a time; others may have been stored while this one compiled.
    return this.runner.exclusive(CHECKS_KEY, async () => {
      this.roomFor(name);
      const previous = this.checks.get(name);
      const failed = await this.load(name, script);
      if (failed !== null) {
        if (previous) await this.load(name, previous.script);
        throw new KitError('invalid_check', `The check does not load: ${failed}`);
      }
      let declared: string;
      try {
        declared = await this.vet(name);
      } catch (e) {
        if (previous) await this.load(name, previous.script);
        throw e;
      }
      const stored: StoredCheck = { source, script, declared, updatedAt: new Date(this.runner.world.nowMs()).toISOString() };
      this.runner.storage.transact((w) => w.put([...this.prefix(), name], stored));
      this.checks.set(name, stored);
      return { name, declared, updatedAt: stored.updatedAt };
    });
  }

  /** Refuses a new check's name once the world keeps MAX_CHECKS (a stored one may be replaced). */
  private roomFor(name: string): void {
    if (!this.checks.has(name) && this.checks.size >= MAX_CHECKS) {
      throw new KitError('too_many_checks', `This world keeps at most ${MAX_CHECKS} checks; replace or delete one first.`, { limit: MAX_CHECKS });
    }
  }

  delete(name: string): Promise<void> {
    return this.runner.exclusive(CHECKS_KEY, async () => {
      this.get(name);
      this.checks.delete(name);
      this.runner.storage.transact((w) => w.remove([...this.prefix(), name]));
      await this.runner.checkLane.unload(this.context(name));
    });
  }

  /** Runs every check over one entry of a twin. A check that fails to run fails with the reason. */
  async run(twin: string, entry: Entry): Promise<CheckResult[]> {
    const input = checkRunInput({ entry, twin, world: this.runner.name });
    const hostCall = treeHostCall(this.runner.world, twin);
    const out: CheckResult[] = [];
    for (const name of [...this.checks.keys()].sort()) {
      const r = await this.runner.checkLane.call(this.context(name), '__kit_check_run', input, hostCall);
      if ('error' in r) {
        out.push({ check: name, pass: false, failures: [`the check did not finish: ${r.error.message}`] });
        continue;
      }
      try {
        out.push({ check: name, ...readCheckVerdict(r.ok) });
      } catch (e) {
        out.push({ check: name, pass: false, failures: [(e as Error).message] });
      }
    }
    return out;
  }
}

/** The runner's `exclusive` key for changes to the set of checks. */
const CHECKS_KEY = '#checks';
