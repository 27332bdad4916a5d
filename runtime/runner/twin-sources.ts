/**
 * Where each served twin's code came from, and the last build of a twin from sources: the
 * `source` of its status (`GET …/twins/<vendor>/status`), which `kit world serve --dev` keeps.
 */
import type { TwinBuildProblem, TwinBundle, TwinSourceStatus } from './types.js';

export class TwinSources {
  private readonly sources = new Map<string, TwinSourceStatus>();

  /** A twin's code loaded (at start, or swapped in): built-in unless its bundle says otherwise; a build from sources is a good one. */
  loaded(bundle: TwinBundle, at: string): void {
    const was = this.sources.get(bundle.vendor);
    const origin = bundle.origin ?? { kind: 'builtin' as const };
    const status: TwinSourceStatus = { kind: origin.kind };
    const path = origin.path ?? was?.path;
    if (path !== undefined) status.path = path;
    if (origin.kind === 'path') status.build = { ok: true, at };
    this.sources.set(bundle.vendor, status);
  }

  /** A twin's sources failed to build; its last good code keeps serving. */
  failed(vendor: string, error: TwinBuildProblem, at: string): void {
    const was = this.sources.get(vendor);
    if (was !== undefined) this.sources.set(vendor, { ...was, build: { ok: false, at, error } });
  }

  of(vendor: string): TwinSourceStatus {
    return this.sources.get(vendor) ?? { kind: 'builtin' };
  }
}
