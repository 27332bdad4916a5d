/**
 * One world served: the vendor wire, each twin's own endpoints, and the world API, over
 * the engine, the sandbox, the router and scenarios.
 *
 * Trusted twins (the built-in ones) run in this thread's V8, synchronously. Code the host does
 * not trust — twins from a user's sources, scenario `js` handlers, checks — runs in a lane (on
 * Node a `SandboxLane`, a worker thread under a watchdog), so a call into it is awaited while this
 * thread serves everything else. Which engines run them is the host's (`RunnerOptions.engines`,
 * engines.ts); this file needs no Node API but `node:crypto`. A twin's requests are handled one at a time (`exclusive`): from
 * catching up its moves to appending its entry nothing else touches its tree, so its ids and
 * answers stay deterministic; other twins and the world API go on meanwhile. Requests overlap
 * freely while their commits are flushed.
 */
import { randomBytes } from 'node:crypto';
import { KitError, isKitError } from '../errors.js';
import type { CallResult, HostCall, HostValue, SandboxLimits } from '../sandbox/sandbox.js';
import type { UntrustedLane } from '../lane/types.js';
import { loadTwinCode, runsTrusted, servedManifest, swapTwinCode } from './twin-code.js';
import type { Storage } from '../store/index.js';
import type { World } from '../world/index.js';
import type { Entry, EntryDraft } from '../world/types.js';
import type { TwinRequest, TwinResponse } from '../../sdk/twin/types.js';
import type { GuestResponse } from '../../sdk/twin/protocol.js';
import { errorResponse, jsonResponse, retryHeaders } from './answers.js';
import { handleWorldApi } from './api.js';
import { decodeSegment, toTwinRequest } from './request.js';
import { RequestLog } from './requests.js';
import { ScenarioSlot, type ScenarioFiles } from './scenarios.js';
import { guestOutputOf, invokeGuest, serveTwin, treeHostCall, treeHostValue, type GuestOutput, type ServedTwin } from './twins.js';
import type { StreamCall, StreamResult, TwinBundle, TwinBuildProblem, TwinSourceStatus, WorldHandle, WorldRequest, WorldResponse } from './types.js';
import { runStreamCall, type StreamHost } from './streams.js';
import { TwinSources } from './twin-sources.js';
import { CheckSet, CHECKS_LANE_MEMORY_BYTES } from './checks.js';
import { Deliverer, type DelivererOptions, type DeliveryResult } from './deliveries.js';
import type { CheckHost, RootHost, ScenarioHost, WorldApiServices } from './services.js';
import { RootSet } from './roots.js';
import { LinkSet } from './links.js';
import { ChangesetStore, replayedHeaders, WorldChangesets, type ParentApi } from './changesets/index.js';
import type { OutboundFetch } from '../roots/outbound.js';
import type { Sealer } from '../roots/sealing.js';
import { defaultGuestEngines, type GuestEngines, type TrustedEngine } from './engines.js';

export interface RunnerOptions {
  world: World;
  storage: Storage;
  /**
   * Limits of the sandbox that runs untrusted code (on Node a worker thread per world, started
   * when such code first runs; its checks get one of their own). `callMs` is each call's wall
   * limit, `callSteps` its step budget.
   */
  limits?: Partial<SandboxLimits>;
  twins: TwinBundle[];
  /**
   * Whether twins marked `trusted` (the built-in ones) run in V8 (`TrustedContexts`) instead of
   * the QuickJS sandbox. Default true; false runs every twin in QuickJS.
   */
  trustTwins?: boolean;
  /**
   * The engines guest code runs in. Default: the host's (`defaultGuestEngines()`; on Node
   * `nodeGuestEngines`: `node:vm` contexts and `SandboxLane` worker threads).
   */
  engines?: GuestEngines;
  /** The twin SDK's guest runtime as a standalone script, for scenario `js` handlers. */
  guestRuntime?: string;
  /** The code version answered in `x-kit-world-code`. */
  code: string;
  /** Whether this host makes branches (the single-world server does not: `GET …/branches` is 404). */
  branches: boolean;
  /** A local world also keeps each twin's scenario as a file (open.ts `scenarioFolder`). */
  scenarioFiles?: ScenarioFiles;
  /** Wall clock for the request report (tests inject one). */
  wallNow?: () => number;
  /** Outbound webhook settings (tests shorten the retry delays). */
  webhooks?: Pick<DelivererOptions, 'maxAttempts' | 'baseDelayMs' | 'timeoutMs' | 'fetch'>;
  /**
   * The host's one way out to a vendor (roots/outbound.ts): refreshes, links and webhook
   * deliveries go through it. Without it a refresh or a link answers `outbound_failed`, and
   * webhooks go out by the global `fetch`.
   */
  outbound?: OutboundFetch;
  /** Seals the twins' real credentials; without it `PUT …/credential` answers `sealing_unavailable`. */
  sealer?: Sealer;
  /** Whether a root or a link may name loopback (`http` allowed there): local worlds and tests. Default false. */
  outboundLoopback?: boolean;
  /** For a branch on a host that makes them: its parent's world API, the origin it pulls from and pushes to. */
  parentApi?: ParentApi;
}

/** What an exchange keeps of a request's body and of the twin's answer (a change is replayed from them). */
const EXCHANGE_BODY_BYTES = 1024 * 1024;
const EXCHANGE_ANSWER_BYTES = 256 * 1024;

const textDecoder = new TextDecoder('utf-8', { fatal: true });
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;
const MAX_CATCH_UP = 10_000;
/**
 * How long one request may spend performing due moves before it is answered 503
 * `catching_up` (the moves done stay done; the next request goes on). A move costs about
 * 1.4 ms (a Stripe renewal), so advancing a clock over years of daily subscriptions used to
 * hold the request until the worker's 5 s watchdog ended the world.
 */
const CATCH_UP_MS = 1000;
const DUE_TYPE = '__due';

function newRequestId(): string {
  return `req_${randomBytes(10).toString('base64url').replace(/[-_]/g, 'x')}`;
}

/** A twin's tree reads for `invokeGuest`: as JSON text, and as values with and without a raw body. */
interface TreeReads {
  call: HostCall;
  parsed: { hostValue: HostValue };
  raw: { rawBody: true; hostValue: HostValue };
}

export class WorldRunner implements WorldHandle, WorldApiServices, ScenarioHost, CheckHost, RootHost {
  readonly name: string;
  readonly code: string;
  readonly world: World;
  readonly storage: Storage;
  readonly twins = new Map<string, ServedTwin>();
  readonly requests = new RequestLog();
  readonly scenarios: ScenarioSlot;
  readonly checks: CheckSet;
  readonly deliverer: Deliverer;
  readonly roots: RootSet;
  readonly links: LinkSet;
  readonly changesets: WorldChangesets;
  readonly branchesServed: boolean;
  /** Untrusted code: twins from users' sources and scenario `js` handlers. */
  readonly lane: UntrustedLane;
  /** The world's checks, each in a runtime of its own (runner/checks.ts). */
  readonly checkLane: UntrustedLane;
  /** Entries that ask for webhooks, queued for sending once they are durable. */
  private awaitingDurable: { twin: string; entry: Entry }[] = [];
  /** The realms of the trusted twins (none when every twin runs in QuickJS). */
  private readonly trusted: TrustedEngine;
  /** Twins loaded into `trusted`. */
  private readonly trustedTwins = new Set<string>();
  /** Per twin (or other key), the tail of the work that holds it (`exclusive`). */
  private readonly sections = new Map<string, Promise<void>>();
  private readonly wallNow: () => number;
  /** Per twin: the earliest scheduled move's instant (Infinity: none), as of a head position. */
  private readonly nextDue = new Map<string, { head: number; dueMs: number }>();
  /** Per twin: where its code came from and how its last build went (`replaceTwin`, `twinBuildFailed`). */
  private readonly sources = new TwinSources();
  private closed = false;
  private inFlight = 0;
  private idle: (() => void) | null = null;

  /** A runner with its twins, scenarios and checks loaded. */
  static async open(options: RunnerOptions): Promise<WorldRunner> {
    const runner = new WorldRunner(options);
    try {
      await runner.start(options.twins);
    } catch (e) {
      await runner.lane.close();
      await runner.checkLane.close();
      runner.trusted.dispose();
      throw e;
    }
    return runner;
  }

  private constructor(private readonly options: RunnerOptions) {
    this.world = options.world;
    this.name = options.world.name;
    this.code = options.code;
    this.storage = options.storage;
    this.branchesServed = options.branches;
    this.wallNow = options.wallNow ?? Date.now;
    const engines = options.engines ?? defaultGuestEngines();
    this.trusted = engines.trusted();
    this.lane = engines.lane({ name: `world ${this.name}`, ...(options.limits ? { limits: options.limits } : {}) });
    this.checkLane = engines.lane({ name: `world ${this.name} checks`, limits: { ...options.limits, memoryBytes: CHECKS_LANE_MEMORY_BYTES } });
    this.scenarios = new ScenarioSlot(this, options.scenarioFiles, options.guestRuntime);
    this.checks = new CheckSet(this);
    this.roots = new RootSet(this, {
      ...(options.outbound !== undefined ? { outbound: options.outbound } : {}),
      ...(options.sealer !== undefined ? { sealer: options.sealer } : {}),
      loopback: options.outboundLoopback === true,
    });
    this.links = new LinkSet(this, this.roots);
    this.changesets = new WorldChangesets(this, {
      ...(options.sealer !== undefined ? { sealer: options.sealer } : {}),
      ...(options.parentApi !== undefined ? { parentApi: options.parentApi } : {}),
    });
    this.deliverer = new Deliverer({
      storage: this.storage,
      world: this.name,
      ...(options.outbound !== undefined ? { outbound: options.outbound } : {}),
      ...options.webhooks,
      onResult: (twin, result) => void this.recordDeliveryResult(twin, result),
    });
  }

  private async start(twins: TwinBundle[]): Promise<void> {
    for (const bundle of twins) {
      if (!this.world.twins().includes(bundle.vendor)) this.world.addTwin(bundle.vendor);
      // A component twin runs in the lane, in a WebAssembly instance of its own (runtime/component/).
      const trusted = runsTrusted(bundle, this.options.trustTwins !== false);
      if (trusted) this.trustedTwins.add(bundle.vendor);
      const loaded = await loadTwinCode(bundle, trusted, this.trusted, this.lane);
      if ('error' in loaded) throw new KitError('invalid_twin', `Twin '${bundle.vendor}' failed to load: ${loaded.error.message}`);
      const served = twins.map((t) => t.vendor).filter((v) => v !== bundle.vendor);
      this.twins.set(bundle.vendor, serveTwin(await servedManifest(bundle, this.lane, served)));
      this.sources.loaded(bundle, new Date(this.wallNow()).toISOString());
    }
    this.requests.restore(this.storage.get(this.requestsKey()));
    await this.scenarios.restore();
    await this.checks.restore();
    this.roots.schedule();
  }

  /**
   * Runs `work` when nothing else holds `key` (a twin's vendor id, or a name of the runner's own)
   * and holds it until `work` settles. Work on other keys goes on meanwhile.
   */
  exclusive<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.sections.get(key);
    const result = before === undefined ? work() : before.then(work);
    const release = (): void => {
      if (this.sections.get(key) === tail) this.sections.delete(key);
    };
    const tail: Promise<void> = result.then(release, release);
    this.sections.set(key, tail);
    return result;
  }

  twin(vendor: string): ServedTwin {
    const t = this.twins.get(vendor);
    if (!t) throw new KitError('unknown_twin', `This world has no twin '${vendor}'.`);
    return t;
  }

  async handle(req: WorldRequest): Promise<WorldResponse> {
    if (this.closed) return errorResponse(new KitError('storage_closed', 'The world is stopping.'));
    this.inFlight++;
    try {
      if (req.surface === 'api') {
        const res = await handleWorldApi(this, req);
        // Clock, scenario and check changes are acknowledged once on disk.
        if (req.method !== 'GET' && req.method !== 'HEAD') await this.durable();
        return res;
      }
      return await this.handleVendor(req);
    } catch (e) {
      return errorResponse(e);
    } finally {
      if (--this.inFlight === 0 && this.idle) this.idle();
    }
  }

  /** One event of a stream connection (see streams.ts); answered once its writes are on disk. */
  async streamCall(call: StreamCall): Promise<StreamResult> {
    if (this.closed) throw new KitError('storage_closed', 'The world is stopping.');
    this.inFlight++;
    try {
      const tally: Tally = { appended: false };
      const host: StreamHost = {
        name: this.name,
        twin: (v) => this.twin(v),
        catchUp: (t) => this.catchUp(t, tally),
        invoke: (t, i) => this.invoke(t, i),
        append: (t, d) => void this.append(t, d, tally),
      };
      const key = typeof call?.twin === 'string' ? call.twin : '';
      const { result } = await this.exclusive(key, () => runStreamCall(host, call));
      if (tally.appended) await this.durable();
      return result;
    } finally {
      if (--this.inFlight === 0 && this.idle) this.idle();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.roots.close();
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    // The request report outlives the runner: read back when the world opens again.
    this.saveRequestReport();
    await this.durable();
    this.deliverer.close();
    await this.lane.close();
    await this.checkLane.close();
    this.trusted.dispose();
  }

  /**
   * When the earliest timed move of any twin falls due by the wall clock (epoch ms), or a rooted
   * twin's scheduled refresh, whichever comes first; null when neither is. Moves are left out
   * while the world's clock is set (they fall due only when it is moved, by a request); refreshes
   * keep the vendor's time. A host that closes idle worlds wakes this one then.
   */
  nextMoveDueMs(): number | null {
    const refresh = this.roots.nextDueMs() ?? Infinity;
    if (this.world.clock().frozen) return Number.isFinite(refresh) ? refresh : null;
    let earliest = refresh;
    for (const twin of this.twins.values()) {
      if (twin.manifest.moves.length === 0) continue;
      const first = this.world.listRecords<{ dueAt: string }>(twin.vendor, DUE_TYPE, { limit: 1 }).records[0];
      if (first !== undefined) earliest = Math.min(earliest, Date.parse(first.value.dueAt));
    }
    return Number.isFinite(earliest) ? earliest : null;
  }

  /**
   * Performs the scheduled refreshes that fell due, then, for every twin, the timed moves that
   * fell due up to the clock — what each twin's next request would do first — and waits until
   * they are on disk (their webhooks then go to the deliverer). Answers how many it performed.
   */
  async performDueMoves(): Promise<number> {
    let performed = await this.roots.performDue();
    for (const twin of this.twins.values()) {
      if (twin.manifest.moves.length === 0) continue;
      for (;;) {
        const tally: Tally = { appended: false };
        try {
          performed += await this.exclusive(twin.vendor, async () => this.catchUp(twin, tally));
          if (tally.appended) await this.durable();
          break;
        } catch (e) {
          if (tally.appended) await this.durable();
          if (!(isKitError(e) && e.code === 'catching_up')) throw e;
          performed += Number(e.details?.['performed'] ?? 0);
        }
      }
    }
    return performed;
  }

  /**
   * Writes the request report to storage, where the world reads it back when it opens again. A
   * closing runner does; a host whose worlds end without closing (an evicted Durable Object) calls
   * it once requests pause.
   */
  saveRequestReport(): void {
    if (this.storage.alive) this.storage.transact((tx) => tx.put(this.requestsKey(), this.requests.snapshot()));
  }

  private requestsKey(): string[] {
    return ['#runner', this.name, 'requests'];
  }

  // ------------------------------------------------------------ vendor wire

  private async handleVendor(req: WorldRequest): Promise<WorldResponse> {
    const started = performance.now();
    const slash = req.path.indexOf('/', 1);
    const vendor = decodeSegment(slash === -1 ? req.path.slice(1) : req.path.slice(1, slash));
    const rest = slash === -1 ? '/' : req.path.slice(slash);
    if (!this.twins.has(vendor) && this.links.has(vendor)) return this.forwardLink(vendor, req, rest, started);
    const twin = this.twin(vendor);
    let route = `${req.method} ${rest}`;
    let res: WorldResponse;
    const tally: Tally = { appended: false };
    try {
      if (rest === '/twin' || rest.startsWith('/twin/')) {
        res = await this.exclusive(vendor, () => this.handleTwinEndpoint(twin, req, rest, tally));
      } else {
        try {
          let out = await this.exclusive(vendor, () => this.dispatchVendor(twin, req, rest, tally));
          if ('scenarioJs' in out) {
            const js = out.scenarioJs;
            const answered = await js.pending;
            out = await this.exclusive(vendor, () => this.afterScenarioJs(twin, req, rest, js, answered, tally));
          }
          route = out.route;
          res = out.response;
        } catch (e) {
          // On the vendor wire a failure (a handler stopped by its budget, …) keeps the vendor's shape.
          res = await this.vendorError(twin, e);
        }
      }
    } catch (e) {
      res = errorResponse(e);
    }
    // Answer only once what this request wrote (its entry, moves it caught up) is on disk.
    if (tally.appended) await this.durable();
    const observedAt = this.roots.observedAt(vendor);
    if (observedAt !== undefined) res.headers['x-kit-observed-at'] = observedAt;
    this.requests.record(vendor, req.receivedAt || this.wallNow(), res.status, performance.now() - started, route);
    return res;
  }

  /** A link's forward: no log, no tree; reported beside the twins'. */
  private async forwardLink(name: string, req: WorldRequest, rest: string, started: number): Promise<WorldResponse> {
    let res: WorldResponse;
    try {
      res = await this.links.forward(name, req, rest);
    } catch (e) {
      res = errorResponse(e);
    }
    this.requests.record(name, req.receivedAt || this.wallNow(), res.status, performance.now() - started, `${req.method} (link)`);
    return res;
  }

  private async handleTwinEndpoint(twin: ServedTwin, req: WorldRequest, rest: string, tally: Tally): Promise<WorldResponse> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      throw new KitError('method_not_allowed', `${rest} answers GET only.`);
    }
    if (rest === '/twin' || rest === '/twin/') return jsonResponse(200, this.manifestOf(twin));
    if (rest === '/twin/scenario') return jsonResponse(200, this.scenarios.report(twin));
    if (rest.startsWith('/twin/store/')) {
      const name = decodeSegment(rest.slice('/twin/store/'.length));
      if (!twin.manifest.stores.includes(name)) throw new KitError('unknown_store', `Twin '${twin.vendor}' has no store '${name}'.`);
      await this.catchUp(twin, tally);
      const request = toTwinRequest(req, rest, true, req.requestId);
      const out = await this.invoke(twin, { kind: 'store', name, query: request.query });
      if (out.thrown) throw new KitError('handler_error', `Store '${name}' failed: ${out.thrown.message}`);
      return jsonResponse(200, out.response?.body ?? null);
    }
    throw new KitError('not_found', `Twin endpoints are /twin, /twin/scenario and /twin/store/<name>; there is no ${rest}.`);
  }

  /** The manifest, as `GET /twin` answers it. */
  manifestOf(twin: ServedTwin): unknown {
    const m = twin.manifest;
    return {
      vendor: m.vendor,
      version: m.version,
      protocol: m.protocol,
      models: m.models,
      matchers: m.routes.map((r) => ({ name: r.name, ...r.match })),
      stores: m.stores,
      moves: m.moves,
      scenarios: m.scenarios,
      root: m.root === undefined ? null : { configured: this.roots.root(twin.vendor) !== null, refresh: m.root.refresh, ...(m.root.ingest !== undefined ? { ingest: m.root.ingest } : {}) },
      requestScopes: m.requestScopes,
    };
  }

  /**
   * A vendor request up to its answer, holding the twin — or, when a scenario `js` handler takes
   * it, up to that handler's call in the lane, started but not awaited (`scenarioJs`): the twin
   * is not held while untrusted code runs (see `afterScenarioJs`).
   */
  private async dispatchVendor(twin: ServedTwin, req: WorldRequest, rest: string, tally: Tally): Promise<Dispatched> {
    const readOnly = req.scope === 'read' && twin.readScoped;
    const requestId = req.requestId || newRequestId();
    let request: TwinRequest;
    try {
      request = toTwinRequest(req, rest, readOnly, requestId);
    } catch (e) {
      return { route: `${req.method} ${rest}`, response: await this.vendorError(twin, e) };
    }
    const caughtUp = this.catchUp(twin, tally);
    if (typeof caughtUp !== 'number') await caughtUp;

    const scenario = this.scenarios.decide(twin, request);
    const delayMs = scenario?.delayMs ?? 0;
    if (scenario && scenario.kind === 'respond') {
      return { route: `scenario ${scenario.handlerName}`, response: this.finish(scenario.response, delayMs) };
    }
    if (scenario && scenario.kind === 'fault') {
      const f = scenario.fault;
      if (f.type === 'reset') return { route: `scenario ${scenario.handlerName}`, response: { status: 502, headers: {}, body: '', fault: 'reset', delayMs } };
      const body = f.body ?? { error: { code: 'scenario_fault', message: `Fault injected by scenario handler '${scenario.handlerName}'.` } };
      return { route: `scenario ${scenario.handlerName}`, response: this.finish({ status: f.status, headers: f.headers, body }, delayMs) };
    }
    if (scenario && scenario.kind === 'js') {
      // Queued in the lane now, while the scenario it was decided on is still the one loaded.
      const pending = this.scenarios.runJs(twin, scenario.call, request);
      return { scenarioJs: { pending, handlerName: scenario.handlerName, request, requestId, delayMs } };
    }
    return this.toTwinRoute(twin, req, rest, request, requestId, delayMs, tally);
  }

  /**
   * What a scenario `js` handler answered, taken back under the twin: its own records
   * (`scenario.*`) committed, then its answer, or the twin's own routes when it passed on. The
   * handler ran without the twin held, so a slow or hostile one holds up none of the twin's
   * other requests; it saw the twin's records as they stood at each read.
   */
  private async afterScenarioJs(twin: ServedTwin, req: WorldRequest, rest: string, js: ScenarioJs, out: GuestOutput, tally: Tally): Promise<{ route: string; response: WorldResponse }> {
    const route = `scenario ${js.handlerName}`;
    if (out.thrown) {
      // A throw answers in the twin's error shape, as a handler stopped by its limits does.
      const failed = new KitError('handler_error', `Scenario handler "${js.handlerName}" threw: ${out.thrown.message}`, { handler: js.handlerName });
      return { route, response: this.finish(await this.vendorBody(twin, failed), js.delayMs) };
    }
    // What it kept of its own, whether it answers or passes on to the twin's own routes.
    this.commit(twin, req, js.requestId, route, out, tally);
    if (out.response) return { route, response: this.finish(out.response, js.delayMs) };
    const caughtUp = this.catchUp(twin, tally);
    if (typeof caughtUp !== 'number') await caughtUp;
    return this.toTwinRoute(twin, req, rest, js.request, js.requestId, js.delayMs, tally);
  }

  /** The twin's own route for a request, or its no-route answer. */
  private async toTwinRoute(twin: ServedTwin, req: WorldRequest, rest: string, request: TwinRequest, requestId: string, delayMs: number, tally: Tally): Promise<{ route: string; response: WorldResponse }> {
    const match = twin.router.match(request);
    if (!match) {
      this.scenarios.noteTwin(twin, request, { route: null, nearestMiss: twin.router.nearestMiss(request) });
      const err = new KitError('no_handler', `Twin '${twin.vendor}' has no route for ${req.method} ${rest}.`);
      return { route: `${req.method} (unmatched)`, response: this.finish(await this.vendorBody(twin, err), delayMs) };
    }
    const routeDef = twin.manifest.routes[match.index]!;
    this.scenarios.noteTwin(twin, request, { route: routeDef.name });
    request.params = match.params;
    // Awaited only when it is a promise: a trusted twin's request goes through without yielding.
    let out = this.invoke(twin, { kind: 'route', index: match.index, request }, undefined, { rawBody: true });
    if (out instanceof Promise) out = await out;
    const routeName = routeDef.name;
    if (out.thrown) console.error(`twinkit: ${twin.vendor} route '${routeName}' threw: ${out.thrown.message}`);
    else {
      const entry = this.commit(twin, req, requestId, routeName, out, tally);
      if (entry !== null && entry.writes.length > 0) this.keepExchange(twin.vendor, entry.position, req, out);
    }
    return { route: routeName, response: this.finish(out.response ?? { status: 204 }, delayMs) };
  }

  /** Appends the entry a handler made, when it wrote or emitted anything. */
  private commit(twin: ServedTwin, req: WorldRequest, requestId: string, route: string, out: GuestOutput, tally: Tally): Entry | null {
    if (out.writes.length === 0 && out.events.length === 0) return null;
    const draft: EntryDraft = {
      cause: {
        kind: 'request',
        method: req.method,
        route,
        path: req.path,
        status: out.response?.status ?? 200,
        requestId,
      },
      writes: out.writes,
    };
    if (out.events.length > 0) draft.events = out.events;
    const tp = req.headers['traceparent'];
    if (tp && TRACEPARENT.test(tp)) draft.traceparent = tp;
    return this.append(twin.vendor, draft, tally);
  }

  /**
   * The request and answer behind an entry the world's own request wrote, kept beside it in
   * the same commit: a changeset replays the request against the root and reads the answer's ids.
   */
  private keepExchange(twin: string, position: number, req: WorldRequest, out: GuestOutput): void {
    const r = out.response;
    let answer: string | null = null;
    if (r !== undefined) {
      if (r.bodyJson !== undefined) answer = r.bodyJson;
      else if (typeof r.body === 'object' && r.body !== null && !(r.body instanceof Uint8Array)) answer = JSON.stringify(r.body);
      else if (typeof r.body === 'string' && /^\s*[[{]/.test(r.body)) answer = r.body;
    }
    if (answer !== null && answer.length > EXCHANGE_ANSWER_BYTES) answer = null;
    const bytes = req.body;
    let body = '';
    if (bytes !== undefined && bytes.length <= EXCHANGE_BODY_BYTES) {
      try {
        body = textDecoder.decode(bytes);
      } catch {
        // Not text (a git pack): not kept, so the change does not replay (docs/changesets.md).
      }
    }
    const headers = replayedHeaders(req.headers);
    const exchange = { query: req.query, contentType: req.headers['content-type'] ?? null, ...(headers ? { headers } : {}), body, answer };
    this.storage.transact((w) => w.put(ChangesetStore.exchangeKey(this.name, twin, position), exchange));
  }

  private finish(r: GuestResponse, delayMs: number): WorldResponse {
    const headers: Record<string, string> = {};
    if (r.headers !== undefined) for (const k in r.headers) headers[k.toLowerCase()] = r.headers[k] as string;
    let body: Uint8Array | string;
    if (r.bodyBase64 !== undefined) body = Buffer.from(r.bodyBase64, 'base64');
    else if (r.bodyJson !== undefined) {
      body = r.bodyJson;
      if (!headers['content-type']) headers['content-type'] = 'application/json';
    }
    else if (typeof r.body === 'string') body = r.body;
    else if (r.body === undefined) body = '';
    else {
      body = JSON.stringify(r.body);
      if (!headers['content-type']) headers['content-type'] = 'application/json';
    }
    // A HEAD's body too: the host drops it and answers its length (host/core/answers.ts `headOf`).
    const out: WorldResponse = { status: r.status ?? 200, headers, body };
    if (delayMs > 0) out.delayMs = delayMs;
    return out;
  }

  /** A KitError on the vendor wire, in the vendor's error shape where the twin defines one. */
  private async vendorError(twin: ServedTwin, e: unknown): Promise<WorldResponse> {
    if (!isKitError(e)) return errorResponse(e);
    const r = await this.vendorBody(twin, e);
    return { status: r.status ?? e.status, headers: { 'content-type': 'application/json', ...retryHeaders(e) }, body: JSON.stringify(r.body) };
  }

  /**
   * A failure in the vendor's error shape where the twin defines one: the twin's context
   * survives an interrupted call, so it is asked for its `errorBody`.
   */
  private async vendorBody(twin: ServedTwin, e: KitError): Promise<TwinResponse> {
    const input = JSON.stringify({ status: e.status, code: e.code, message: e.message });
    const r = this.trustedTwins.has(twin.vendor) ? this.trusted.call(twin.vendor, '__kit_error_body', input) : await this.lane.call(twin.vendor, '__kit_error_body', input);
    if ('ok' in r) {
      try {
        return { status: e.status, body: JSON.parse(r.ok) };
      } catch {
        // A twin whose error shape is not JSON gets the kit's.
      }
    }
    return { status: e.status, body: e.toBody() };
  }

  // ------------------------------------------------------------ sandbox

  /**
   * Runs `__kit_invoke` for the twin at its next position, at the instant its entry will be
   * stamped with. `input` is a fresh object of the caller's: the world, twin, position and
   * instant are added to it.
   */
  invoke(twin: ServedTwin, input: Record<string, unknown>, nowMs = this.world.stampMs(twin.vendor), options?: { rawBody?: boolean }): GuestOutput | Promise<GuestOutput> {
    input['world'] = this.name;
    input['twin'] = twin.vendor;
    input['position'] = this.world.head(twin.vendor) + 1;
    input['nowMs'] = nowMs;
    const reads = this.readsOf(twin.vendor);
    // A trusted twin answers in this thread, at once; an untrusted one in the lane, later.
    if (this.trustedTwins.has(twin.vendor)) return invokeGuest(this.trusted, twin.vendor, input, reads.call, options?.rawBody === true ? reads.raw : reads.parsed);
    return this.lane.call(twin.vendor, '__kit_invoke', JSON.stringify(input), reads.call).then((result: CallResult) => guestOutputOf(result, options));
  }

  /** Per twin, made once: its tree's host functions and the invoke options that carry them. */
  private readonly reads = new Map<string, TreeReads>();
  private readsOf(vendor: string): TreeReads {
    let reads = this.reads.get(vendor);
    if (reads === undefined) {
      const hostValue = treeHostValue(this.world, vendor);
      reads = { call: treeHostCall(this.world, vendor), parsed: { hostValue }, raw: { rawBody: true, hostValue } };
      this.reads.set(vendor, reads);
    }
    return reads;
  }

  /**
   * Performs every timed move that fell due up to the world clock, each in an entry stamped
   * at its instant. Answers how many it performed (the caller waits for durability). Past
   * CATCH_UP_MS (or MAX_CATCH_UP moves) with moves still due, throws 503 `catching_up`. Answers
   * at once (no promise) when nothing can be due.
   */
  catchUp(twin: ServedTwin, tally: Tally): number | Promise<number> {
    if (twin.manifest.moves.length === 0) return 0;
    const now = this.world.nowMs();
    // The tree changes only by appends, each of which moves the head: while the head stands
    // still, so does the earliest scheduled move, and nothing is due before it.
    const known = this.nextDue.get(twin.vendor);
    if (known !== undefined && known.head === this.world.head(twin.vendor) && now < known.dueMs) return 0;
    return this.performDue(twin, tally, now);
  }

  private async performDue(twin: ServedTwin, tally: Tally, now: number): Promise<number> {
    let performed = 0;
    let caughtUp = false;
    const deadline = performance.now() + CATCH_UP_MS;
    for (; performed < MAX_CATCH_UP && performance.now() < deadline; performed++) {
      const first = this.world.listRecords<{ id: string; move: string; dueAt: string; data: unknown }>(twin.vendor, DUE_TYPE, { limit: 1 }).records[0];
      if (!first) {
        this.nextDue.set(twin.vendor, { head: this.world.head(twin.vendor), dueMs: Infinity });
        caughtUp = true;
        break;
      }
      const dueMs = Date.parse(first.value.dueAt);
      if (!(dueMs <= now)) {
        if (dueMs > now) this.nextDue.set(twin.vendor, { head: this.world.head(twin.vendor), dueMs });
        caughtUp = true;
        break;
      }
      const head = this.world.head(twin.vendor);
      const lastAt = head > 0 ? Date.parse(this.world.entry(twin.vendor, head)!.occurredAt) : dueMs;
      const stampMs = Math.max(dueMs, lastAt);
      const out = await this.invoke(twin, { kind: 'move', move: first.value.move, id: first.value.id, data: first.value.data, dueAt: first.value.dueAt }, stampMs);
      if (out.thrown) console.error(`twinkit: ${twin.vendor} move '${first.value.move}' threw: ${out.thrown.message}`);
      const draft: EntryDraft = {
        cause: { kind: 'move', move: first.value.move, dueAt: first.value.dueAt },
        writes: out.writes,
        occurredAt: new Date(stampMs).toISOString(),
      };
      if (!out.thrown && out.events.length > 0) draft.events = out.events;
      if (draft.writes.length === 0) draft.writes = [{ type: DUE_TYPE, id: first.id, value: null }];
      this.append(twin.vendor, draft, tally);
    }
    if (!caughtUp) {
      // Stopped by the clock or the count: caught up all the same if nothing more is due.
      const next = this.world.listRecords<{ dueAt: string }>(twin.vendor, DUE_TYPE, { limit: 1 }).records[0];
      caughtUp = next === undefined || !(Date.parse(next.value.dueAt) <= now);
    }
    // No request sees a world that is only partly caught up: it is told to come back.
    if (!caughtUp) {
      throw new KitError('catching_up', `The world is performing the timed moves of '${twin.vendor}' that fell due up to its clock: ${performed} performed for this request, more remain. Retry the request.`, { performed });
    }
    return performed;
  }

  private append(twin: string, draft: EntryDraft, tally: Tally): Entry {
    const entry = this.world.append(twin, draft);
    tally.appended = true;
    // An entry that schedules or cancels nothing leaves the earliest scheduled move where it was.
    const known = this.nextDue.get(twin);
    if (known !== undefined && known.head === entry.position - 1 && !draft.writes.some((w) => w.type === DUE_TYPE)) known.head = entry.position;
    if (draft.events?.some((e) => e.type === 'webhook.delivery')) this.awaitingDurable.push({ twin, entry });
    return entry;
  }

  /** For roots.ts: a `root.*` call into the twin. */
  async invokeGuest(twin: ServedTwin, input: Record<string, unknown>): Promise<GuestOutput> {
    return this.invoke(twin, input);
  }

  /** For changesets/: entries appended in one transaction; it waits for `durable` itself. */
  appendEntries(twin: string, drafts: EntryDraft[]): Entry[] {
    const entries = this.world.appendBatch(twin, drafts);
    // A pushed change may schedule a move: the earliest due is read again.
    this.nextDue.delete(twin);
    return entries;
  }

  /** For changesets/: every check of the world over one entry. */
  runChecks(twin: string, entry: Entry): Promise<{ check: string; pass: boolean; failures: string[] }[]> {
    return this.checks.run(twin, entry);
  }

  /** For roots.ts: an entry appended; it waits for `durable` itself. */
  appendEntry(twin: string, draft: EntryDraft): Entry {
    return this.append(twin, draft, { appended: false });
  }

  /** Waits for the group commit, then hands the webhooks of what it covered to the deliverer. */
  async durable(): Promise<void> {
    const covered = this.awaitingDurable.length;
    await this.world.durable();
    for (const { twin, entry } of this.awaitingDurable.splice(0, covered)) this.deliverer.enqueue(twin, entry);
  }

  /** An attempt's outcome, given to the twin's `webhook.result` move when it declares one. */
  private async recordDeliveryResult(twin: string, result: DeliveryResult): Promise<void> {
    const served = this.twins.get(twin);
    if (this.closed || !served?.manifest.moves.includes('webhook.result')) return;
    const tally: Tally = { appended: false };
    await this.exclusive(twin, async () => {
      if (this.closed) return;
      const now = this.world.stampMs(twin);
      const at = new Date(now).toISOString();
      let out: GuestOutput;
      try {
        out = await this.invoke(served, { kind: 'move', move: 'webhook.result', id: `webhook-result-${result.id ?? 'anon'}`, data: result, dueAt: at }, now);
      } catch (e) {
        out = { writes: [], events: [], thrown: { message: e instanceof Error ? e.message : String(e) } };
      }
      if (out.thrown) {
        console.error(`twinkit: ${twin} move 'webhook.result' threw: ${out.thrown.message}`);
        return;
      }
      const draft: EntryDraft = { cause: { kind: 'move', move: 'webhook.result', dueAt: at }, writes: out.writes };
      if (out.events.length > 0) draft.events = out.events;
      if (draft.writes.length > 0 || draft.events) this.append(twin, draft, tally);
    });
    if (tally.appended) await this.durable();
  }

  // ------------------------------------------------------------ twins from sources, live

  /**
   * Swaps a served twin's code for `bundle`'s, between two of its requests: its log, tree,
   * scenario and checks stay. The new code is loaded where the old ran, and its manifest read
   * back from the loaded code (never taken from the bundle's word); code that does not load, or
   * whose manifest is refused or names another vendor, leaves the old code serving and throws
   * KitError `invalid_twin`. Trusted (built-in) twins are not replaced.
   */
  async replaceTwin(bundle: TwinBundle): Promise<void> {
    const old = this.twin(bundle.vendor);
    if (this.trustedTwins.has(bundle.vendor)) throw new KitError('invalid_twin', `Twin '${bundle.vendor}' is trusted code; only a twin built from sources is replaced while served.`, { field: 'trusted' });
    await this.exclusive(bundle.vendor, async () => {
      const served = [...this.twins.keys()].filter((v) => v !== bundle.vendor);
      const manifest = await swapTwinCode(this.lane, old.bundle, bundle, served);
      this.twins.set(bundle.vendor, serveTwin({ ...bundle, manifest }));
      // Its moves may differ: the earliest due is read again.
      this.nextDue.delete(bundle.vendor);
      this.sources.loaded(bundle, new Date(this.wallNow()).toISOString());
    });
  }

  /** A twin's sources failed to build: said in its status (`source.build`); its last good code keeps serving. */
  twinBuildFailed(vendor: string, error: TwinBuildProblem): void {
    this.sources.failed(vendor, error, new Date(this.wallNow()).toISOString());
  }

  /** Where a served twin's code came from, and its last build (`GET …/twins/<vendor>/status`). */
  twinSource(vendor: string): TwinSourceStatus {
    return this.sources.of(vendor);
  }

  /** The wall clock, for the request report. */
  wallClock(): number {
    return this.wallNow();
  }
}

/** A scenario `js` handler's call, started in the lane, and what the request needs after it. */
interface ScenarioJs {
  pending: Promise<GuestOutput>;
  handlerName: string;
  request: TwinRequest;
  requestId: string;
  delayMs: number;
}

/** A vendor request answered, or waiting for a scenario `js` handler. */
type Dispatched = { route: string; response: WorldResponse } | { scenarioJs: ScenarioJs };

/** Whether a request appended anything (it then answers once that is durable). */
interface Tally {
  appended: boolean;
}

