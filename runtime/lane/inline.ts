/**
 * A lane for untrusted code in this thread, for hosts without worker threads (workerd): one
 * `WorldSandbox` behind the same queue as `SandboxLane` — operations one at a time, in order; a
 * sandbox that died (out of memory, a trap) is replaced on the next operation, with every script
 * that was loaded and not unloaded loaded again — given a `SandboxModule` rather than reading the
 * package's files. Needs no Node API.
 *
 * What stops a runaway here is the sandbox's own limits and nothing else: no watchdog can end this
 * thread. On workerd the clock does not move while a Worker computes, so the wall-time limit
 * (`callMs`) never fires there; the step budget (`callSteps`) does. A step is one call of QuickJS's
 * interrupt handler, about every 10,000 interpreter branches and calls, and work inside one native
 * call (`Array(1e6).fill(0)`, `'x'.repeat(1e7)`) counts nothing, so how long a budget lasts
 * depends on the loop (runtime/lane/README.md); past it, the platform's CPU limit ends the isolate.
 */
import { WorldSandbox, type CallResult, type HostCall, type LoadOptions, type SandboxLimits } from '../sandbox/sandbox.js';
import { DEFAULT_CALL_MS } from '../sandbox/sandbox.js';
import type { SandboxModule } from '../sandbox/wasm.js';
import type { UntrustedLane } from './types.js';

export interface InlineLaneOptions {
  /** Names the lane in errors and logs, e.g. `world local/demo`. */
  name: string;
  /** The compiled QuickJS module (on workerd: `sandboxModuleOf` over the `.wasm` imported as a module). */
  module: SandboxModule | Promise<SandboxModule>;
  /** The sandbox's limits: set `callSteps` for hosts whose clock stands still while code runs. */
  limits?: Partial<SandboxLimits>;
}

export class InlineLane implements UntrustedLane {
  readonly name: string;
  readonly #module: Promise<SandboxModule>;
  readonly #limits: Partial<SandboxLimits>;
  /** What was loaded and not unloaded, in order: loaded again into every new sandbox. */
  readonly #loaded = new Map<string, { source: string; options: LoadOptions }>();
  #sandbox: WorldSandbox | undefined;
  /** The last operation queued: the next one starts when it has settled. */
  #tail: Promise<unknown> = Promise.resolve();
  #closed = false;
  #created = 0;

  constructor(options: InlineLaneOptions) {
    if (typeof options?.name !== 'string') throw new TypeError('InlineLane: name must be a string');
    this.name = options.name;
    this.#module = Promise.resolve(options.module);
    // Nothing waits on it before the first operation: an unhandled rejection here would be noise.
    this.#module.catch(() => undefined);
    this.#limits = { ...options.limits };
  }

  get restarts(): number {
    return Math.max(0, this.#created - 1);
  }

  /** The wall limit of an operation (`callMs`), where the clock moves while code runs; there is no grace, nothing to end. */
  get limitMs(): number {
    return this.#limits.callMs ?? DEFAULT_CALL_MS;
  }

  async load(name: string, source: string, options: LoadOptions = {}): Promise<CallResult> {
    return this.#enqueue((sandbox) => {
      const result = sandbox.load(name, source, options);
      if ('ok' in result) this.#loaded.set(name, { source, options });
      else this.#loaded.delete(name);
      return result;
    }, (failure) => {
      this.#loaded.delete(name);
      return failure;
    });
  }

  call(name: string, fn: string, input: string, hostCall?: HostCall): Promise<CallResult> {
    return this.#enqueue((sandbox) => sandbox.call(name, fn, input, hostCall), (failure) => failure);
  }

  /** Drops context `name` in its turn: a sandbox started after that does not load it again. */
  unload(name: string): Promise<void> {
    const forget = (): void => {
      this.#loaded.delete(name);
    };
    return this.#enqueue((sandbox) => {
      forget();
      sandbox.unload(name);
    }, forget, false);
  }

  memoryUsed(name: string): Promise<number | null> {
    return this.#enqueue((sandbox) => sandbox.memoryUsed(name), () => null);
  }

  async close(): Promise<void> {
    this.#closed = true;
    // Operations still queued answer disposed when their turn comes; none is running now (they are synchronous).
    this.#sandbox?.dispose();
    this.#sandbox = undefined;
    await this.#tail;
  }

  /**
   * Runs `work` on a live sandbox once every operation queued before it has settled; `failed`
   * answers instead when the lane is closed or no sandbox could be started. `start`: false when
   * there is no point starting a sandbox for it (an unload).
   */
  #enqueue<T>(work: (sandbox: WorldSandbox) => T, failed: (failure: CallResult) => T, start = true): Promise<T> {
    const run = this.#tail.then(async (): Promise<T> => {
      if (this.#closed) return failed(disposed(`${this.name}: the lane is closed`));
      if (!start && this.#sandbox?.alive !== true) return failed({ ok: '' });
      const ready = await this.#ready();
      if (!(ready instanceof WorldSandbox)) return failed(ready);
      return work(ready);
    });
    this.#tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /**
   * The live sandbox, or a new one with what was loaded loaded again. A script that no longer
   * loads (its top level runs out of steps or memory) is dropped and reported; the rest go on.
   */
  async #ready(): Promise<WorldSandbox | CallResult> {
    if (this.#sandbox?.alive === true) return this.#sandbox;
    let module: SandboxModule;
    try {
      module = await this.#module;
    } catch (e) {
      return disposed(`${this.name}: the sandbox module is not available: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (this.#closed) return disposed(`${this.name}: the lane is closed`);
    for (;;) {
      let sandbox: WorldSandbox;
      try {
        sandbox = WorldSandbox.create(module, this.#limits);
      } catch (e) {
        return disposed(`${this.name}: the sandbox did not start: ${e instanceof Error ? e.message : String(e)}`);
      }
      this.#created++;
      this.#sandbox = sandbox;
      for (const [name, { source, options }] of [...this.#loaded]) {
        const r = sandbox.load(name, source, options);
        if ('error' in r) {
          console.error(`twinkit: ${this.name}: '${name}' no longer loads after the sandbox restarted and is dropped: ${r.error.message}`);
          this.#loaded.delete(name);
        }
        if (!sandbox.alive) break;
      }
      // A script whose load ended the sandbox was dropped: start again with the others.
      if (sandbox.alive) return sandbox;
    }
  }
}

function disposed(message: string): CallResult {
  return { error: { code: 'disposed', message } };
}
