/**
 * One component twin, instantiated where it runs (on Node, inside a lane's worker thread, under
 * the lane's watchdog): jco's transpiled module, given the host's imports (`kit:twin/tree` over
 * the lane's host call, `kit:twin/entropy` and the WASI stubs over the call's context), and
 * answering the JSON protocol of a bundle: `__kit_manifest` and `__kit_invoke`, as a
 * `CallResult`. A call that traps (or exhausts the capped memory) fails alone: the instance is
 * dropped and a fresh one made for the next call (a twin keeps nothing between calls). Pure but
 * for how the transpiled module is imported (`importModule`, given by the host).
 */
import type { CallResult, HostCall } from '../sandbox/sandbox.js';
import { idSource, type IdSource } from '../world/ids.js';
import { ComponentAnswerError, guestOutputOfWit, manifestOfWit, witCallOf } from './protocol.js';
import type { ComponentCode } from './types.js';
import { wasiImports } from './wasi.js';

type Exports = { manifest(): unknown; invoke(context: unknown, invocation: unknown): unknown };
type Instantiate = (getCoreModule: (name: string) => WebAssembly.Module, imports: object, instantiateCore: (m: WebAssembly.Module, i?: WebAssembly.Imports) => Promise<WebAssembly.Instance>) => Promise<Exports>;

/** Imports jco's ES module text (on Node: a `data:` URL); answers its namespace. */
export type ModuleImporter = (js: string) => Promise<{ instantiate: Instantiate }>;

/** What the imports read during a call; outside one (the manifest), a clock at 0 and no tree. */
interface CallState {
  nowMs: number;
  ids: IdSource;
  hostCall: HostCall | undefined;
}

const IDLE: CallState = { nowMs: 0, ids: idSource('', '', 0), hostCall: undefined };
const PAGE = 65536;
/** How much of a call's standard error is kept to explain its failure. */
const STDERR_KEPT = 2048;

export class ComponentTwin {
  #exports: Exports | undefined;
  #memories: WebAssembly.Memory[] = [];
  #state: CallState = IDLE;
  /** The end of what the component wrote to standard error during the current call. */
  #stderr = '';

  private constructor(
    readonly name: string,
    private readonly code: ComponentCode,
    private readonly module: { instantiate: Instantiate },
  ) {}

  /** Imports the transpiled module and makes a first instance (its top level runs now, not at the first call). */
  static async load(name: string, code: ComponentCode, importModule: ModuleImporter): Promise<ComponentTwin> {
    const module = await importModule(code.js);
    if (typeof module.instantiate !== 'function') throw new TypeError(`${name}: the transpiled component exports no instantiate (was it transpiled with --instantiation async?)`);
    const twin = new ComponentTwin(name, code, module);
    try {
      await twin.#instantiate();
    } catch (e) {
      // jco's bindings of the component model's async ABI need JSPI, which Node 20 and 22 do not offer by default.
      if (/WebAssembly\.(Suspending|promising)/.test(messageOf(e))) {
        throw new Error(`${messageOf(e)}: the component uses the component model's async ABI (JSPI), which this host does not offer; build it synchronous (componentize-qjs --sync)`);
      }
      throw e;
    }
    return twin;
  }

  /** What its memories hold now, in bytes. */
  memoryUsed(): number {
    return this.#memories.reduce((n, m) => n + m.buffer.byteLength, 0);
  }

  async #instantiate(): Promise<void> {
    const memories: WebAssembly.Memory[] = [];
    const tree = this.#treeImports();
    const state = (): CallState => this.#state;
    const imports = {
      'kit:twin/tree': tree,
      'kit:twin/entropy': { next: () => state().ids.random(), id: (prefix: string, length: number) => state().ids.id(prefix, length) },
      'kit:twin/types': {},
      ...wasiImports({
        nowMs: () => state().nowMs,
        random: () => state().ids.random(),
        stderr: (bytes) => {
          this.#stderr = (this.#stderr + new TextDecoder().decode(bytes)).slice(-STDERR_KEPT);
        },
      }),
    };
    const getCoreModule = (file: string): WebAssembly.Module => {
      const m = this.code.modules[file];
      if (m === undefined) throw new TypeError(`${this.name}: the transpiled component asks for a core module '${file}' it was not given`);
      return m;
    };
    const instantiateCore = async (m: WebAssembly.Module, i?: WebAssembly.Imports): Promise<WebAssembly.Instance> => {
      const instance = await WebAssembly.instantiate(m, i ?? {});
      // A memory re-exported by another core instance is the same object: counted once.
      for (const v of Object.values(instance.exports)) if (v instanceof WebAssembly.Memory && !memories.includes(v)) memories.push(v);
      return instance;
    };
    this.#exports = await this.module.instantiate(getCoreModule, imports, instantiateCore);
    this.#memories = memories;
  }

  #treeImports(): Record<string, unknown> {
    const host = (op: string, arg: object): string => {
      const hostCall = this.#state.hostCall;
      if (hostCall === undefined) throw new Error(`kit:twin/tree ${op}: the tree is not readable outside a call`);
      return hostCall(op, JSON.stringify(arg));
    };
    return {
      get: (type: string, id: string): string | undefined => {
        const text = host('get', { type, id });
        return text === 'null' ? undefined : text;
      },
      list: (type: string, options: { after?: string; before?: string; limit?: number; reverse?: boolean }) => {
        const page = JSON.parse(host('list', { type, after: options.after, before: options.before, limit: options.limit, reverse: options.reverse === true })) as {
          items: { id: string; value: unknown }[];
          hasMore: boolean;
        };
        return { items: page.items.map((item) => ({ id: item.id, value: JSON.stringify(item.value) })), hasMore: page.hasMore };
      },
      count: (type: string): bigint => BigInt(JSON.parse(host('count', { type })) as number),
    };
  }

  /** `__kit_manifest` or `__kit_invoke`, answered as a bundle's context would. */
  async call(fn: string, input: string, hostCall: HostCall | undefined): Promise<CallResult> {
    if (this.#exports === undefined) {
      try {
        await this.#instantiate();
      } catch (e) {
        return { error: { code: 'load_error', message: `${this.name}: the component could not be instantiated again: ${messageOf(e)}` } };
      }
    }
    const exports = this.#exports!;
    this.#stderr = '';
    try {
      switch (fn) {
        case '__kit_manifest':
          return { ok: JSON.stringify(manifestOfWit(exports.manifest())) };
        case '__kit_invoke': {
          const parsed = JSON.parse(input) as Record<string, unknown>;
          const call = witCallOf(parsed);
          if ('unsupported' in call) return { error: { code: 'guest_error', message: call.unsupported } };
          this.#state = { nowMs: Number(parsed['nowMs']) || 0, ids: idSource(String(parsed['world']), String(parsed['twin']), Number(parsed['position']) || 0), hostCall };
          return { ok: guestOutputOfWit(exports.invoke(call.context, call.invocation)) };
        }
        default:
          // `__kit_error_body` and the rest: the world answers in the kit's own error shape.
          return { error: { code: 'guest_error', message: `a component twin has no ${fn}` } };
      }
    } catch (e) {
      if (e instanceof ComponentAnswerError) return { error: { code: 'guest_error', message: `${this.name}: ${e.message}` } };
      // A trap leaves the instance unusable (jco refuses to enter it again): the next call makes a new one.
      // A memory grown to 7/8 of its cap or more: the trap is most likely an allocation the cap refused.
      const full = this.#memories.some((m) => m.buffer.byteLength >= this.code.memoryBytes - this.code.memoryBytes / 8 - PAGE);
      this.#exports = undefined;
      this.#memories = [];
      if (full) return { error: { code: 'out_of_memory', message: `${this.name}: the component ran out of its ${this.code.memoryBytes} bytes of memory (${messageOf(e)})` } };
      const said = this.#stderr.trim();
      return { error: { code: 'guest_error', message: `${this.name}: the component failed: ${messageOf(e)}${said === '' ? '' : ` (it wrote: ${said})`}` } };
    } finally {
      this.#state = IDLE;
    }
  }
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
