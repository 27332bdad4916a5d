/**
 * The scenario in force on each twin of a world: kept in storage (and, for a local world,
 * in a file beside it: `ScenarioFiles`), read again on every request so a `PUT` is live on the
 * next call. `js` handlers run in a context of their own in the world's sandbox lane (untrusted
 * code: on Node in a worker thread under a watchdog), with the twin's API.
 *
 * The report (`GET /twin/scenario`) lists the requests no handler took whether or not a
 * scenario is in force: with none, a journal per twin of the requests none of its own routes
 * took. A twin's catch-all route (`/*rest` alone: Stripe's and GitHub's "not found") taking a
 * request counts as a miss, named in `answeredBy`, with the nearest of the other routes.
 */
import { KitError } from '../errors.js';
import { checkScenarioOutput, jsCall, jsOutcome, parseScenario, ScenarioState, twinSide, UnmatchedJournal, type Decision, type JsCall, type Scenario, type ScenarioReport, type ScenarioRequest, type TwinOutcome } from '../scenario/index.js';
import type { TwinRequest } from '../../sdk/twin/types.js';
import { guestOutputOf, treeHostCall, type GuestOutput, type ServedTwin } from './twins.js';
import type { ScenarioHost, ScenarioService, StoredScenario } from './services.js';
import { scenarioKey } from './state.js';
import type { Key } from '../store/index.js';

interface Slot {
  stored: StoredScenario;
  scenario: Scenario;
  state: ScenarioState;
  /** The js handlers' function sources, in the order loaded into the scenario context. */
  jsKeys: string[];
}

/** Where a local world also keeps each twin's scenario document as a file (open.ts `scenarioFolder`). */
export interface ScenarioFiles {
  /** Keeps `source` as the twin's scenario, in place of any other format's. */
  write(vendor: string, format: 'json' | 'yaml', source: string): void;
  /** Removes the twin's scenario file, whatever its format. */
  remove(vendor: string): void;
  /**
   * The file a world file declares as the twin's scenario (`colocate.scenarioPath`), and what
   * was wrong with it when last read (null: nothing), for the report and the twin's status;
   * null for a twin without one.
   */
  declared?(vendor: string): ScenarioFileState | null;
}

/** A colocated scenario file, and why its last edit is not in force (with the line it names, when known). */
export interface ScenarioFileState {
  path: string;
  problem: { message: string; line?: number } | null;
}

export class ScenarioSlot implements ScenarioService {
  private readonly slots = new Map<string, Slot>();
  /** Each twin without a scenario in force: the requests none of its routes took (made on the first). */
  private readonly plain = new Map<string, UnmatchedJournal>();

  constructor(
    private readonly runner: ScenarioHost,
    private readonly files: ScenarioFiles | undefined,
    private readonly guestRuntime: string | undefined,
  ) {}

  /** Puts the stored scenarios back in force (a runner starting). */
  async restore(): Promise<void> {
    for (const vendor of this.runner.twins.keys()) {
      const stored = this.runner.storage.get<StoredScenario>(this.key(vendor));
      if (!stored) continue;
      try {
        await this.install(vendor, stored);
      } catch (e) {
        console.error(`twinkit: the stored scenario of '${vendor}' no longer loads and is not in force: ${(e as Error).message}`);
      }
    }
  }

  private key(vendor: string): Key {
    return scenarioKey(this.runner.name, vendor);
  }

  private takesScenarios(twin: ServedTwin): void {
    if (!twin.manifest.scenarios) throw new KitError('no_scenario', `Twin '${twin.vendor}' takes no scenario.`);
  }

  get(twin: ServedTwin): StoredScenario {
    this.takesScenarios(twin);
    const slot = this.slots.get(twin.vendor);
    if (!slot) throw new KitError('no_scenario', `Twin '${twin.vendor}' has no scenario in force.`);
    return slot.stored;
  }

  /** Validates and puts a document in force; a bad one is refused and the one in force kept. */
  async put(twin: ServedTwin, source: string, contentType: string | undefined, fromFile = false): Promise<Slot> {
    this.takesScenarios(twin);
    const scenario = parseScenario(source, contentType);
    const stored: StoredScenario = { source, format: scenario.format, updatedAt: new Date(this.runner.world.nowMs()).toISOString() };
    const slot = await this.install(twin.vendor, stored, scenario);
    this.runner.storage.transact((w) => w.put(this.key(twin.vendor), stored));
    // Read from its file: writing it back would only touch it again.
    if (!fromFile) this.files?.write(twin.vendor, stored.format, source);
    return slot;
  }

  /** Whether a scenario is in force, and since when (for the twin's status). */
  inForce(twin: ServedTwin): { handlers: number; updatedAt: string } | null {
    const slot = this.slots.get(twin.vendor);
    return slot ? { handlers: slot.scenario.handlers.length, updatedAt: slot.stored.updatedAt } : null;
  }

  /** The twin's colocated scenario file and its last problem, or null (scenarios kept by the world alone). */
  file(twin: ServedTwin): ScenarioFileState | null {
    return this.files?.declared?.(twin.vendor) ?? null;
  }

  /** Whether a scenario is in force whose document is exactly `source` (a file read again unchanged). */
  holds(vendor: string, source: string): boolean {
    return this.slots.get(vendor)?.stored.source === source;
  }

  async delete(twin: ServedTwin, fromFile = false): Promise<void> {
    this.takesScenarios(twin);
    if (!this.slots.has(twin.vendor)) throw new KitError('no_scenario', `Twin '${twin.vendor}' has no scenario in force.`);
    this.slots.delete(twin.vendor);
    this.plain.delete(twin.vendor); // back to the plain twin: its list starts over, as a new scenario's does
    await this.runner.lane.unload(this.context(twin.vendor));
    this.runner.storage.transact((w) => w.remove(this.key(twin.vendor)));
    if (!fromFile) this.files?.remove(twin.vendor);
  }

  private context(vendor: string): string {
    return `scenario:${vendor}`;
  }

  private async install(vendor: string, stored: StoredScenario, parsed?: Scenario): Promise<Slot> {
    const scenario = parsed ?? parseScenario(stored.source, stored.format === 'json' ? 'application/json' : 'application/yaml');
    const { script, jsKeys } = this.script(vendor, scenario);
    if (script === null) {
      await this.runner.lane.unload(this.context(vendor));
    } else {
      const loaded = await this.runner.lane.load(this.context(vendor), script, { hostCall: true });
      if ('error' in loaded) {
        // Loading replaced the context: put back the js of the scenario still in force.
        await this.reloadOne(vendor);
        throw new KitError('invalid_scenario', `A js handler does not load: ${loaded.error.message}`);
      }
    }
    const slot: Slot = { stored, scenario, state: new ScenarioState(scenario), jsKeys };
    this.slots.set(vendor, slot);
    this.plain.delete(vendor);
    return slot;
  }

  /**
   * The guest runtime and one twin definition whose routes are the js handlers (null when
   * there are none). The twin API checks a route's answer, but a js handler may answer
   * nothing (pass on to the twin), so its result travels inside a body, checked by jsOutcome.
   */
  private script(vendor: string, scenario: Scenario): { script: string | null; jsKeys: string[] } {
    const routes: string[] = [];
    const jsKeys: string[] = [];
    for (const h of scenario.handlers) {
      if (h.action.kind !== 'js') continue;
      const call = jsCall(h, h.action.source, {});
      jsKeys.push(call.cacheKey);
      // A Promise or a function would cross as JSON `{}` (an empty 200) or nothing: refused by name.
      const refuse = `throw new TypeError(${JSON.stringify(`scenario handler "${h.name}" returned `)} + (typeof r === 'function' ? 'a function' : 'a Promise') + ': return a response object { status, headers, body } or nothing (handlers are synchronous)');`;
      routes.push(`{ name: ${JSON.stringify(call.cacheKey)}, match: { path: '/' }, handle: function (request, ctx) { var r = (${call.functionSource})(request, ctx); if (typeof r === 'function' || (r !== null && typeof r === 'object' && typeof r.then === 'function')) { ${refuse} } return { status: 200, body: { result: r === undefined ? null : r } }; } }`);
    }
    if (routes.length === 0) return { script: null, jsKeys };
    if (!this.guestRuntime) throw new KitError('invalid_scenario', 'This world cannot run JavaScript scenario handlers (no guest runtime was given).');
    const script = `${this.guestRuntime}\n;__kit_install_twin({ vendor: ${JSON.stringify(vendor)}, version: 'scenario', protocol: 'http', models: { hosts: [], resources: [] }, routes: [${routes.join(',\n')}] });`;
    return { script, jsKeys };
  }

  private async reloadOne(vendor: string): Promise<void> {
    const slot = this.slots.get(vendor);
    const { script } = slot ? this.script(vendor, slot.scenario) : { script: null };
    if (script === null) await this.runner.lane.unload(this.context(vendor));
    else await this.runner.lane.load(this.context(vendor), script, { hostCall: true });
  }

  private scenarioRequest(request: TwinRequest): ScenarioRequest {
    return { method: request.method, path: request.path, query: request.query, headers: request.headers, body: request.body, id: request.requestId, at: new Date(this.runner.world.nowMs()).toISOString() };
  }

  decide(twin: ServedTwin, request: TwinRequest): Decision | null {
    const slot = this.slots.get(twin.vendor);
    if (!slot) return null;
    const world = this.runner.world;
    return slot.state.decide(this.scenarioRequest(request), (type, id) => world.getRecord(twin.vendor, type, id));
  }

  async runJs(twin: ServedTwin, call: JsCall, request: TwinRequest): Promise<GuestOutput> {
    const slot = this.slots.get(twin.vendor);
    const index = slot?.jsKeys.indexOf(call.cacheKey) ?? -1;
    if (!slot || index < 0) throw new KitError('internal', `Scenario handler ${call.cacheKey} is not loaded.`);
    const world = this.runner.world;
    const input = { kind: 'route', index, request: { ...request, params: call.params }, world: this.runner.name, twin: twin.vendor, position: world.head(twin.vendor) + 1, nowMs: world.nowMs() };
    const out = guestOutputOf(await this.runner.lane.call(this.context(twin.vendor), '__kit_invoke', JSON.stringify(input), treeHostCall(world, twin.vendor)));
    if (out.thrown) return out;
    // Only records of its own (`scenario.*`) and no events: else a handler_error, and nothing is committed.
    checkScenarioOutput(call.handlerName, out);
    // Unwrap the result the route wrapper carried (see `script`).
    const result = (out.response?.body as { result?: unknown } | undefined)?.result;
    const outcome = jsOutcome(result, call.cacheKey);
    const unwrapped: GuestOutput = { writes: out.writes, events: out.events };
    if (outcome.kind === 'respond') unwrapped.response = outcome.response;
    return unwrapped;
  }

  /**
   * Tells the scenario how the twin's own routes took a request, or, with none in force, lists
   * a request none of them took. Called on every request the twin's routes see: a match by any
   * route but a catch-all costs two lookups.
   */
  noteTwin(twin: ServedTwin, request: TwinRequest, outcome: TwinOutcome): void {
    const slot = this.slots.get(twin.vendor);
    const seen = missOf(twin, request, outcome);
    if (slot) {
      slot.state.noteTwin(this.scenarioRequest(request), seen);
      return;
    }
    if (seen.route !== null) return;
    let journal = this.plain.get(twin.vendor);
    if (!journal) this.plain.set(twin.vendor, (journal = new UnmatchedJournal()));
    journal.push(this.scenarioRequest(request), null, twinSide(seen));
  }

  report(twin: ServedTwin): ScenarioReport & { file?: ScenarioFileState } {
    const slot = this.slots.get(twin.vendor);
    const report = slot ? slot.state.report() : (this.plain.get(twin.vendor) ?? new UnmatchedJournal()).plainReport();
    const file = this.file(twin);
    return file === null ? report : { ...report, file };
  }
}

/**
 * What the twin's routes did, with its catch-all counted as a miss: a request only the catch-all
 * took, and a miss whose nearest route is the catch-all, get the nearest of the other routes.
 */
function missOf(twin: ServedTwin, request: TwinRequest, outcome: TwinOutcome): TwinOutcome {
  const catchAll = twin.router.catchAll;
  if (catchAll.size === 0) return outcome;
  if (outcome.route !== null) {
    const index = catchAllNamed(twin, outcome.route);
    if (index === undefined) return outcome;
    return { route: null, nearestMiss: twin.router.nearestMiss(request, catchAll), answeredBy: outcome.route };
  }
  if (outcome.nearestMiss !== null && catchAll.has(outcome.nearestMiss.index)) {
    return { ...outcome, nearestMiss: twin.router.nearestMiss(request, catchAll) };
  }
  return outcome;
}

function catchAllNamed(twin: ServedTwin, route: string): number | undefined {
  for (const i of twin.router.catchAll) if (twin.manifest.routes[i]?.name === route) return i;
  return undefined;
}
