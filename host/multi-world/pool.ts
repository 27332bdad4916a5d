/**
 * The worlds a host has open: a world opens on its first request and closes when idle, so a
 * host keeps thousands on disk and a bounded set in memory. Open means a `WorldRunner` (its
 * twins loaded, its scenarios and checks restored, its sandbox lanes ready to start); closed
 * means nothing of it in memory beyond the registry's bounded cache.
 *
 * A world is idle when no request of its own is in flight, nothing has used it for `idleMs`,
 * and its webhook deliveries are all done (a world is not closed with a delivery waiting to be
 * retried: closing it would put the retry off to its next request). Past `maxOpen`, the least
 * recently used world with nothing in flight closes first.
 *
 * A branch's runner reaches its parent's world API through the pool (parent.ts): a push or a
 * pull of a branch opens its parent as a request would.
 *
 * Timed moves of a closed world: when it closes, the pool notes when its earliest move falls
 * due by the wall clock (only a world whose clock is not set has any), and opens it then to
 * perform them (`wakeAt`); the host's schedule is one timer over those notes.
 */
import { isCodedError } from '../../runtime/errors.js';
import { WorldRunner, type RunnerOptions } from '../../runtime/runner/world-runner.js';
import type { GuestEngines } from '../../runtime/runner/engines.js';
import { HostError } from '../errors.js';
import type { SandboxLimits } from '../../runtime/sandbox/index.js';
import type { Storage } from '../../runtime/store/index.js';
import type { WorldStore } from '../../runtime/world/index.js';
import { parentApiOf } from './parent.js';
import type { TwinSets } from './twin-sets.js';
import { unrefTimer } from '../../runtime/timers.js';

export interface PoolOptions {
  store: WorldStore;
  storage: Storage;
  /** The twins of a world's vendors. */
  twins: TwinSets;
  guestRuntime?: string;
  limits?: Partial<SandboxLimits>;
  /** The engines runners run guest code in (the edge's); default Node's. */
  engines?: GuestEngines;
  /** At most this many worlds open at once (default 256). */
  maxOpen?: number;
  /** A world nobody used for this long closes (default 60 s). */
  idleMs?: number;
  /** The vendor behind rooted twins: the host's way out, its sealing key, whether loopback may be named (runtime/runner RunnerOptions). */
  roots?: Pick<RunnerOptions, 'outbound' | 'sealer' | 'outboundLoopback'>;
  /** Called with a world's next wake-up (epoch ms) when it closes with moves scheduled. */
  onClosed?(name: string, wakeAtMs: number | null): void;
  now?: () => number;
}

interface OpenWorld {
  runner: WorldRunner;
  inFlight: number;
  lastUsed: number;
}

export class WorldPool {
  readonly #options: PoolOptions;
  readonly #open = new Map<string, OpenWorld>();
  readonly #opening = new Map<string, Promise<OpenWorld>>();
  readonly #closing = new Map<string, Promise<void>>();
  readonly #maxOpen: number;
  readonly #idleMs: number;
  readonly #now: () => number;
  #timer: ReturnType<typeof setInterval> | null = null;
  #stopped = false;

  constructor(options: PoolOptions) {
    this.#options = options;
    this.#maxOpen = options.maxOpen ?? 256;
    this.#idleMs = options.idleMs ?? 60_000;
    this.#now = options.now ?? Date.now;
    if (!(this.#maxOpen >= 1)) throw new TypeError(`maxOpen must be at least 1, got ${this.#maxOpen}`);
    this.#timer = setInterval(() => void this.sweep(), Math.max(250, Math.min(this.#idleMs / 2, 10_000)));
    unrefTimer(this.#timer);
  }

  /** Runs `work` with the world open (opening it first); it counts as in flight meanwhile. */
  async use<T>(name: string, work: (runner: WorldRunner) => Promise<T>): Promise<T> {
    const open = await this.#get(name);
    open.inFlight++;
    open.lastUsed = this.#now();
    try {
      return await work(open.runner);
    } finally {
      open.inFlight--;
      open.lastUsed = this.#now();
    }
  }

  /** The runner of an open world, without counting as a use (its idle time goes on); undefined when closed. */
  peek(name: string): WorldRunner | undefined {
    return this.#open.get(name)?.runner;
  }

  isOpen(name: string): boolean {
    return this.#open.has(name);
  }

  /** Whether a runner of the world is open, opening or closing (its engine state is in use). */
  holds(name: string): boolean {
    return this.#open.has(name) || this.#opening.has(name) || this.#closing.has(name);
  }

  get openCount(): number {
    return this.#open.size;
  }

  /** Closes the world if it is open (a world being removed, or rotated out of memory). */
  async close(name: string): Promise<void> {
    const opening = this.#opening.get(name);
    if (opening !== undefined) await opening.catch(() => undefined);
    const open = this.#open.get(name);
    if (open === undefined) return this.#closing.get(name);
    return this.#closeOne(name, open);
  }

  /** Closes idle worlds, then the least recently used ones past `maxOpen`. */
  async sweep(): Promise<void> {
    const now = this.#now();
    const closing: Promise<void>[] = [];
    for (const [name, open] of this.#open) {
      if (open.inFlight === 0 && now - open.lastUsed >= this.#idleMs && open.runner.deliverer.pending() === 0) closing.push(this.#closeOne(name, open));
    }
    let excess = this.#open.size - this.#maxOpen;
    if (excess > 0) {
      const byAge = [...this.#open].filter(([, o]) => o.inFlight === 0).sort((a, b) => a[1].lastUsed - b[1].lastUsed);
      for (const [name, open] of byAge) {
        if (excess-- <= 0) break;
        closing.push(this.#closeOne(name, open));
      }
    }
    await Promise.all(closing);
  }

  /** Closes every world (the host stopping). */
  async closeAll(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    await Promise.all([...this.#opening.values()].map((p) => p.catch(() => undefined)));
    await Promise.all([...this.#open].map(([name, open]) => this.#closeOne(name, open)));
    await Promise.all(this.#closing.values());
  }

  async #get(name: string): Promise<OpenWorld> {
    const open = this.#open.get(name);
    if (open !== undefined) return open;
    const closing = this.#closing.get(name);
    if (closing !== undefined) await closing;
    let opening = this.#opening.get(name);
    if (opening === undefined) {
      opening = this.#openOne(name)
        .catch((e: unknown) => {
          // A world that will not open (a twin that fails to load, a storage error) is said to be
          // unavailable, with the reason; its neighbours are not touched.
          if (isCodedError(e)) throw e;
          console.error(`kit host: opening ${name} failed:`, e);
          throw new HostError('world_unavailable', `the world ${name} could not be opened: ${e instanceof Error ? e.message : String(e)}`);
        })
        .finally(() => this.#opening.delete(name));
      this.#opening.set(name, opening);
    }
    return opening;
  }

  async #openOne(name: string): Promise<OpenWorld> {
    if (this.#stopped) throw new HostError('shutting_down', 'the host is stopping');
    const { store, storage } = this.#options;
    const world = store.openWorld(name);
    // Installed twins not in memory (an edge family's) are fetched first.
    const { bundles, code } = await this.#options.twins.load(world.twins());
    // A branch's origin is its parent, reached through this pool (opened as a request would open it).
    const parent = world.base()?.world;
    const runner = await WorldRunner.open({
      world,
      storage,
      twins: bundles,
      code,
      branches: false,
      ...(this.#options.guestRuntime !== undefined ? { guestRuntime: this.#options.guestRuntime } : {}),
      ...(this.#options.limits !== undefined ? { limits: this.#options.limits } : {}),
      ...(this.#options.engines !== undefined ? { engines: this.#options.engines } : {}),
      ...this.#options.roots,
      ...(parent !== undefined ? { parentApi: parentApiOf(parent, (request) => this.use(parent, (p) => p.handle(request))) } : {}),
    });
    const open: OpenWorld = { runner, inFlight: 0, lastUsed: this.#now() };
    this.#open.set(name, open);
    // Past the bound: make room, without waiting for it.
    if (this.#open.size > this.#maxOpen) void this.sweep();
    return open;
  }

  #closeOne(name: string, open: OpenWorld): Promise<void> {
    if (this.#open.get(name) !== open) return this.#closing.get(name) ?? Promise.resolve();
    this.#open.delete(name);
    const closing = (async () => {
      let wake: number | null = null;
      try {
        wake = open.runner.nextMoveDueMs();
      } catch {
        wake = null;
      }
      await open.runner.close();
      // The engine's in-memory state of the world goes too (until it opens again).
      this.#options.store.release(name);
      this.#options.onClosed?.(name, wake);
    })().finally(() => this.#closing.delete(name));
    this.#closing.set(name, closing);
    return closing;
  }
}
