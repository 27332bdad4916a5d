/**
 * The engine for code the host trusts: the built-in twins, which ship with twinkit and are
 * reviewed like the rest of it. Each loaded script gets a realm of its own in this thread's V8 —
 * its own global object, with the same prelude and the same one-string-in, one-string-out `call`
 * as `WorldSandbox`; `callValue` also lets the input and the tree's reads cross as values, since
 * the guest shares this heap.
 *
 * Where a realm comes from is the host's (`TrustedRealmMaker`): on Node a `node:vm` context
 * (`trusted-node.ts`), on workerd, which has no `node:vm` and refuses code generation, a module
 * written at build time for each bundle (`trusted-module.ts`, `trusted-edge.ts`).
 *
 * Why: a Stripe create spent ~400 µs interpreting in QuickJS and a retrieve ~80 µs (bench/README.md,
 * "Issue 8"); V8 runs the same bundle in a few µs. A realm is NOT a security boundary
 * (same heap, same process): no step budget, no memory cap. Code a host does not trust — a twin
 * built from a user's sources, scenario `js` handlers, checks — stays in `WorldSandbox`. A
 * runaway built-in twin is a bug of ours; in a world served from a worker thread the watchdog
 * still ends it.
 *
 * Determinism is the guest runtime's, as in QuickJS: on its first call it installs a `Date`
 * that reads the world clock and a `Math.random` drawn from the world's seeded generator; the
 * prelude seeds `Math.random` before that. Each realm has its own `Date` and `Math` for them.
 *
 * Needs no Node API.
 */
import { forgetClones, jsonAdopt, jsonClone, jsonCopy } from './json-copy.js';
import type { CallResult, GuestEngine, HostBytes, HostCall, HostValue } from './sandbox.js';

/** What the prelude (prelude.ts) evaluates to in a realm. */
export interface Prelude {
  describe(e: unknown): string;
  installHost(raw: (op: string, arg: string, encoded?: number) => string): void;
  installBytes(raw: (op: string, arg: number, ...inputs: Uint8Array[]) => Uint8Array | [Uint8Array, number], sliced: boolean): void;
}

/** One script's realm, made with its prelude run and its script not yet. */
export interface TrustedRealm {
  /** The realm's global object, as the host sees it: the script's globals are read here. */
  readonly global: Record<string, unknown>;
  /** What PRELUDE_SOURCE evaluated to in this realm. */
  readonly prelude: Prelude;
  /** Runs the script in the realm (once, after the host functions are installed); throws what it throws. */
  runScript(): void;
}

/** Makes the realm of script `source` loaded as `name`; throws when it cannot (a load_error). */
export type TrustedRealmMaker = (name: string, source: string) => TrustedRealm;

interface TrustedContext {
  prelude: Prelude;
  /** The context's global object, as the host sees it. */
  global: Record<string, unknown>;
}

const MAX_MESSAGE_CHARS = 4096;

export class TrustedContexts implements GuestEngine {
  readonly #contexts = new Map<string, TrustedContext>();
  #hostCall: HostCall | undefined;
  #hostValue: HostValue | undefined;
  #running = false;
  #disposed = false;
  readonly #realms: TrustedRealmMaker;
  readonly #hostBytes: HostBytes | undefined;

  /**
   * `realms`: where each loaded script's realm comes from (`nodeTrustedRealms`, `edgeTrustedRealms(…)`).
   * `hostBytes`: offered to contexts loaded with `hostCall` as `__host_bytes` (the inputs cross as
   * the guest's own views, the answer as the host's bytes seen through a view of the guest's realm).
   */
  constructor(realms: TrustedRealmMaker, hostBytes?: HostBytes) {
    if (typeof realms !== 'function') throw new TypeError('TrustedContexts(realms): expected a realm maker (nodeTrustedRealms on Node)');
    this.#realms = realms;
    this.#hostBytes = hostBytes;
  }

  get alive(): boolean {
    return !this.#disposed;
  }

  /**
   * Runs `source` in a fresh realm named `name` (replacing one of that name). The script runs
   * as a function body: it defines its globals on `globalThis`, as bundles do; a top-level `var`
   * or function declaration stays local to it.
   */
  load(name: string, source: string, options?: { hostCall?: boolean }): CallResult {
    if (typeof name !== 'string' || typeof source !== 'string') throw new TypeError('load(name, source): both must be strings');
    if (this.#disposed) return disposed();
    this.#assertNotRunning('load');
    this.unload(name);
    let realm: TrustedRealm;
    try {
      realm = this.#realms(name, source);
      const global = realm.global;
      if (options?.hostCall === true) {
        realm.prelude.installHost((op, arg, encoded) => this.#rawHostCall(op, arg, encoded));
        global['__host_value'] = (op: string, arg: Record<string, unknown>) => this.#rawHostValue(op, arg);
        // The guest runtime's writes and events, copied into this realm as JSON would copy them
        // (`__host_clone`: a twin's copyJson, which `__host_adopt`, for a write handed over,
        // keeps instead of copying again until the call ends).
        global['__host_copy'] = jsonCopy;
        global['__host_clone'] = jsonClone;
        global['__host_adopt'] = jsonAdopt;
        const hostBytes = this.#hostBytes;
        if (hostBytes !== undefined) {
          realm.prelude.installBytes((op, arg, ...inputs) => {
            let out: unknown;
            try {
              out = hostBytes(op, arg, inputs);
            } catch (e) {
              throw asHostError(e);
            }
            if (out instanceof Uint8Array || (Array.isArray(out) && out[0] instanceof Uint8Array && typeof out[1] === 'number')) return out as Uint8Array | [Uint8Array, number];
            throw hostError(`host answered ${cut(op)} with neither bytes nor [bytes, number]`);
          }, false);
        }
      }
      realm.runScript();
    } catch (e) {
      return { error: { code: 'load_error', message: cut(describeHost(e)) } };
    }
    this.#contexts.set(name, { prelude: realm.prelude, global: realm.global });
    return { ok: '' };
  }

  call(name: string, fn: string, input: string, hostCall?: HostCall): CallResult {
    if (typeof name !== 'string' || typeof fn !== 'string' || typeof input !== 'string') {
      throw new TypeError('call(name, fn, input): all three must be strings');
    }
    return this.#call(name, fn, input, hostCall, undefined);
  }

  /**
   * `fn` gets `input` itself, not its JSON, and `__host_value` answers values: the guest shares
   * this heap, so what crosses need not be copied as text. The guest sees objects of this realm
   * (`[] instanceof Array` is false for them in the guest; `Array.isArray` is true).
   */
  callValue(name: string, fn: string, input: object, hostCall: HostCall, hostValue: HostValue): CallResult {
    if (typeof name !== 'string' || typeof fn !== 'string' || typeof input !== 'object' || input === null) {
      throw new TypeError('callValue(name, fn, input): two strings and an object');
    }
    return this.#call(name, fn, input, hostCall, hostValue);
  }

  #call(name: string, fn: string, input: string | object, hostCall: HostCall | undefined, hostValue: HostValue | undefined): CallResult {
    if (this.#disposed) return disposed();
    this.#assertNotRunning('call');
    const loaded = this.#contexts.get(name);
    if (loaded === undefined) return { error: { code: 'load_error', message: `nothing is loaded under the name '${cut(name)}'` } };
    this.#running = true;
    this.#hostCall = hostCall;
    this.#hostValue = hostValue;
    try {
      // Called directly, not through the prelude's `invoke`: strings cross this heap whole, so
      // the result needs no check for characters QuickJS could not pass.
      const f = loaded.global[fn];
      if (typeof f !== 'function') return { error: { code: 'guest_error', message: `TypeError: global '${cut(fn)}' is not a function` } };
      const out: unknown = (f as (input: unknown) => unknown)(input);
      if (typeof out === 'string') return { ok: out };
      // Called with a value, the guest runtime answers its writes, events and response as values beside the text.
      if (hostValue !== undefined && isValueAnswer(out)) {
        const result: CallResult = { ok: out.answer, writes: out.writes, events: out.events };
        if (out.response !== undefined) {
          result.response = out.response;
          result.body = out.body;
        }
        return result;
      }
      const what = out !== null && typeof out === 'object' && typeof (out as { then?: unknown }).then === 'function' ? 'a promise: trusted calls are synchronous' : out === null ? 'null' : `a ${typeof out}`;
      return { error: { code: 'guest_error', message: `TypeError: the function returned ${what}, not a string` } };
    } catch (e) {
      return { error: { code: classify(e), message: cut(describeGuest(loaded.prelude, e)) } };
    } finally {
      this.#hostCall = undefined;
      this.#hostValue = undefined;
      this.#running = false;
      forgetClones();
    }
  }

  unload(name: string): void {
    this.#assertNotRunning('unload');
    this.#contexts.delete(name);
  }

  dispose(): void {
    this.#contexts.clear();
    this.#disposed = true;
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  #assertNotRunning(what: string): void {
    if (this.#running) throw new TypeError(`TrustedContexts.${what}() called from inside a host call`);
  }

  /** The host side of `__host_call`, as `WorldSandbox` answers it (see prelude.ts). */
  #rawHostCall(op: string, arg: string, encoded?: number): string {
    const host = this.#hostCall;
    if (host === undefined) throw hostError('no host function is offered during this call');
    if (encoded === 1) {
      op = String(JSON.parse(op));
      arg = String(JSON.parse(arg));
    }
    let out: unknown;
    try {
      out = host(op, arg);
    } catch (e) {
      throw asHostError(e);
    }
    if (typeof out !== 'string') throw hostError(`host answered ${cut(op)} with a ${typeof out}, not a string`);
    // Strings cross whole here; the guest's __host_call still decodes a leading U+0001.
    return out.charCodeAt(0) === 1 ? `\u0001${JSON.stringify(out)}` : out;
  }

  /** The host side of `__host_value`: the value itself. */
  #rawHostValue(op: string, arg: Record<string, unknown>): unknown {
    const host = this.#hostValue;
    if (host === undefined) throw hostError('no host function is offered during this call');
    if (typeof op !== 'string' || typeof arg !== 'object' || arg === null) throw hostError('__host_value(op, arg) takes a string and an object');
    try {
      return host(op, arg);
    } catch (e) {
      throw asHostError(e);
    }
  }
}

function isValueAnswer(v: unknown): v is { answer: string; writes: unknown; events: unknown; response?: unknown; body?: unknown } {
  return typeof v === 'object' && v !== null && typeof (v as { answer?: unknown }).answer === 'string';
}

function hostError(message: string): Error {
  const error = new Error(message);
  error.name = 'HostError';
  return error;
}

/** A host failure as the guest sees it: HostError, with a KitError's code. */
function asHostError(e: unknown): Error {
  const error = hostError(cut(e instanceof Error ? e.message : String(e)));
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string') (error as Error & { code?: string }).code = code;
  return error;
}

function classify(e: unknown): 'guest_error' | 'stack_overflow' {
  // The context's own RangeError: not an instance of this realm's Error.
  const { name, message } = (e ?? {}) as { name?: unknown; message?: unknown };
  return name === 'RangeError' && typeof message === 'string' && /call stack/i.test(message) ? 'stack_overflow' : 'guest_error';
}

/** Names a thrown value with the context's own `describe`, as the QuickJS sandbox does. */
function describeGuest(prelude: Prelude, e: unknown): string {
  try {
    const pair: unknown = JSON.parse(prelude.describe(e));
    if (Array.isArray(pair) && typeof pair[0] === 'string' && typeof pair[1] === 'string') return pair[0] === '' ? pair[1] : `${pair[0]}: ${pair[1]}`;
  } catch {
    // fall through
  }
  return 'a thrown value that cannot be described';
}

function describeHost(e: unknown): string {
  if (e !== null && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string') {
    const name = (e as { name?: unknown }).name;
    return `${typeof name === 'string' ? `${name}: ` : ''}${(e as { message: string }).message}`;
  }
  return String(e);
}

function disposed(): CallResult {
  return { error: { code: 'disposed', message: 'this engine has been disposed' } };
}

function cut(text: string): string {
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}…` : text;
}
