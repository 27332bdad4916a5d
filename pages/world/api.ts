/**
 * The world page's calls: the world's own endpoints (`{world_api}/…`) with the browser's
 * session, each typed with its answer (pages/ui/types.ts).
 */
import type { Approval, Branch, BranchMade, Changeset, ChangesetList, CheckRow, Clock, Deployed, NamedKey, NamedKeyMade, PageConfig, RequestReport, TimelinePage, TwinStatus, Verification, World, WorldMap } from '../ui/index.js';

/** How a timeline is narrowed (spec "Looking into a world"). */
export interface TimelineFilter {
  twin?: string;
  trace?: string;
}

/** A scenario as it is stored: its document and the format the world read it in. */
export interface ScenarioDocument {
  source: string;
  format: 'json' | 'yaml';
}

const enc = encodeURIComponent;

/** A document that starts with `{` is JSON (the world reads it faster, up to 4 MB); anything else YAML. */
export function formatOf(source: string): 'json' | 'yaml' {
  return source.trimStart().startsWith('{') ? 'json' : 'yaml';
}

export class WorldPageApi {
  constructor(readonly world: World) {}

  clock(): Promise<Clock> {
    return this.world.api('/clock');
  }

  setClock(at: string): Promise<Clock> {
    return this.world.api('/clock', { method: 'PUT', body: { at } });
  }

  advanceClock(by: string): Promise<Clock> {
    return this.world.api('/clock/advance', { method: 'POST', body: { by } });
  }

  map(): Promise<WorldMap> {
    return this.world.api('/map');
  }

  async twins(): Promise<TwinStatus[]> {
    return (await this.world.api<{ twins: TwinStatus[] }>('/twins')).twins;
  }

  timeline(filter: TimelineFilter, before: string | null, limit = 50): Promise<TimelinePage> {
    const q = new URLSearchParams({ limit: String(limit) });
    if (before !== null) q.set('before', before);
    if (filter.twin !== undefined && filter.twin !== '') q.set('twin', filter.twin);
    if (filter.trace !== undefined && filter.trace !== '') q.set('trace', filter.trace);
    return this.world.api(`/timeline?${q}`);
  }

  branches(): Promise<Branch[]> {
    return this.world.api('/branches');
  }

  makeBranch(input: { label?: string; ttl?: number; at?: string }): Promise<BranchMade> {
    return this.world.api('/branches', { method: 'POST', body: input });
  }

  removeBranch(name: string): Promise<void> {
    return this.world.api(`/branches/${name.split('/').map(enc).join('/')}`, { method: 'DELETE' });
  }

  /** The twin's scenario in force, as it was stored; 404 `no_scenario` when it has none. */
  async scenario(vendor: string): Promise<ScenarioDocument> {
    const source = await this.world.api<string>(`/twins/${enc(vendor)}/scenario`, { headers: { accept: 'application/yaml, application/json' }, text: true });
    return { source, format: formatOf(source) };
  }

  putScenario(vendor: string, source: string, format: 'json' | 'yaml'): Promise<{ twin: string; format: string; handlers: number; updatedAt: string }> {
    return this.world.api(`/twins/${enc(vendor)}/scenario`, { method: 'PUT', body: source, headers: { 'content-type': format === 'json' ? 'application/json' : 'application/yaml' } });
  }

  removeScenario(vendor: string): Promise<void> {
    return this.world.api(`/twins/${enc(vendor)}/scenario`, { method: 'DELETE' });
  }

  async checks(): Promise<CheckRow[]> {
    return (await this.world.api<{ checks: CheckRow[] }>('/checks')).checks;
  }

  checkSource(name: string): Promise<string> {
    return this.world.api(`/checks/${enc(name)}`, { headers: { accept: 'text/javascript' } });
  }

  putCheck(name: string, source: string): Promise<{ name: string; declared: string; updatedAt: string }> {
    return this.world.api(`/checks/${enc(name)}`, { method: 'PUT', body: source, headers: { 'content-type': 'text/javascript' } });
  }

  removeCheck(name: string): Promise<void> {
    return this.world.api(`/checks/${enc(name)}`, { method: 'DELETE' });
  }

  async keys(): Promise<NamedKey[]> {
    return (await this.world.api<{ keys: NamedKey[] }>('/keys')).keys;
  }

  makeKey(input: { name: string; scope: 'read' | 'write' }): Promise<NamedKeyMade> {
    return this.world.api('/keys', { method: 'POST', body: input });
  }

  revokeKey(id: string): Promise<void> {
    return this.world.api(`/keys/${enc(id)}`, { method: 'DELETE' });
  }

  requests(hours: number): Promise<RequestReport> {
    return this.world.api(`/requests?hours=${hours}`);
  }

  changesets(): Promise<ChangesetList> {
    return this.world.api('/changesets');
  }

  changeset(name: string): Promise<Changeset> {
    return this.world.api(`/changesets/${enc(name)}`);
  }

  /** Cuts the world's unpushed changes into a changeset; 409 `nothing_to_cut` when there are none. */
  cut(input: { message: string; name?: string }): Promise<Changeset> {
    return this.world.api('/changesets', { method: 'POST', body: input });
  }

  verify(name: string): Promise<Verification> {
    return this.world.api(`/changesets/${enc(name)}/verify`, { method: 'POST' });
  }

  /** The world signs as the session's person: the `as` sent is what the page shows it as, and is ignored. */
  approve(name: string, input: { as: string; note?: string }): Promise<Approval> {
    return this.world.api(`/changesets/${enc(name)}/approve`, { method: 'POST', body: input });
  }

  /** Deploys one changeset to its twins' roots; a browser session confirms it by naming it. */
  deploy(name: string, confirm: string): Promise<Deployed> {
    return this.world.api(`/deploy/${enc(name)}`, { method: 'POST', body: { confirm } });
  }
}

/** What every section of the page is given. */
export interface SectionProps {
  api: WorldPageApi;
  config: PageConfig;
  /** Whether the session may change the world (a write session); a read session sees no forms. */
  writes: boolean;
}
