/**
 * A world's checks: JavaScript exporting `check` (or default) as `{ name, run(entry, tree) }`,
 * each loaded in a context of its own in the world's sandbox with nothing of the world but
 * the entry and a read-only tree. Kept in storage; run over entries by `run` (the changeset
 * flow — verify, deploy — runs every check over every entry it carries).
 */
import { KitError } from '../errors.js';
import { checkRunInput, compileCheck, readCheckName, readCheckVerdict } from '../checks/index.js';
import { prefixEnd } from '../store/keys.js';
import type { Entry } from '../world/types.js';
import { treeHostCall } from './twins.js';
import type { WorldRunner } from './world-runner.js';

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

export class CheckSet {
  private readonly checks = new Map<string, StoredCheck>();

  constructor(private readonly runner: WorldRunner) {
    for (const { key, value } of runner.storage.range<StoredCheck>({ start: this.prefix(), end: prefixEnd(this.prefix()) })) {
      const name = String(key[key.length - 1]);
      if (this.load(name, value.script) === null) this.checks.set(name, value);
    }
  }

  private prefix(): string[] {
    return ['#runner', this.runner.name, 'check'];
  }

  private context(name: string): string {
    return `check:${name}`;
  }

  /** Loads a compiled check; answers its declared name, or null when it failed (message logged). */
  private load(name: string, script: string): string | null {
    const sandbox = this.runner.worldSandbox;
    const loaded = sandbox.load(this.context(name), script, { hostCall: true });
    if ('error' in loaded) return loaded.error.message;
    return null;
  }

  private declaredName(name: string): string {
    const r = this.runner.worldSandbox.call(this.context(name), '__kit_check_name', '');
    if ('error' in r) {
      this.runner.worldSandbox.unload(this.context(name));
      throw new KitError('invalid_check', `The check does not load: ${r.error.message}`);
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
    // Others may have been stored while this one compiled.
    this.roomFor(name);
    const previous = this.checks.get(name);
    const failed = this.load(name, script);
    if (failed !== null) {
      if (previous) this.load(name, previous.script);
      throw new KitError('invalid_check', `The check does not load: ${failed}`);
    }
    let declared: string;
    try {
      declared = this.declaredName(name);
    } catch (e) {
      if (previous) this.load(name, previous.script);
      throw e;
    }
    const stored: StoredCheck = { source, script, declared, updatedAt: new Date(this.runner.world.nowMs()).toISOString() };
    this.runner.storage.transact((w) => w.put([...this.prefix(), name], stored));
    this.checks.set(name, stored);
    return { name, declared, updatedAt: stored.updatedAt };
  }

  /** Refuses a new check's name once the world keeps MAX_CHECKS (a stored one may be replaced). */
  private roomFor(name: string): void {
    if (!this.checks.has(name) && this.checks.size >= MAX_CHECKS) {
      throw new KitError('too_many_checks', `This world keeps at most ${MAX_CHECKS} checks; replace or delete one first.`, { limit: MAX_CHECKS });
    }
  }

  delete(name: string): void {
    this.get(name);
    this.checks.delete(name);
    this.runner.worldSandbox.unload(this.context(name));
    this.runner.storage.transact((w) => w.remove([...this.prefix(), name]));
  }

  /** Runs every check over one entry of a twin. A check that fails to run fails with the reason. */
  run(twin: string, entry: Entry): CheckResult[] {
    const input = checkRunInput({ entry, twin, world: this.runner.name });
    const hostCall = treeHostCall(this.runner.world, twin);
    const out: CheckResult[] = [];
    for (const name of [...this.checks.keys()].sort()) {
      const r = this.runner.worldSandbox.call(this.context(name), '__kit_check_run', input, hostCall);
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

  /** After a sandbox restart: load every check again. */
  reload(): void {
    for (const [name, c] of this.checks) this.load(name, c.script);
  }
}
