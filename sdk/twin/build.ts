/**
 * The twin build (Node side): bundles a twin's entry file and the guest runtime into one
 * sandbox script with esbuild, and reads its manifest back. Built-in twins are listed in
 * `twins/index.ts`; a twin from a user's sources (`kit twin build`, a world file's `path:`) is
 * built with `trusted: false`: its manifest is read in the QuickJS sandbox, never in V8.
 */
import { existsSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import * as esbuild from 'esbuild';
import { KitError } from '../../runtime/errors.js';
import { envNameAllowed } from '../attach/manifest.js';
import type { TwinBundle, TwinManifestJson } from '../../runtime/runner/types.js';
import { builtinTwinEntries } from '../../twins/index.js';
import { checkUntrustedTwin } from '../../runtime/runner/twin-check.js';
import { SandboxLane } from '../../runtime/lane/lane.js';
import type { UntrustedLane } from '../../runtime/lane/types.js';
import type { SandboxLimits } from '../../runtime/sandbox/sandbox.js';

/** A built twin: `{ vendor, source, manifest }` (the runner's `TwinBundle`). */
export type BuiltTwin = TwinBundle;

const GUEST_RUNTIME = join('sdk', 'twin', 'guest', 'runtime.ts');

/**
 * The repository root: the nearest ancestor of this module holding the guest runtime's source.
 * Works from the sources (tests) and from `dist/` (the guest sources are not compiled there).
 */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, GUEST_RUNTIME))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`twin build: cannot find ${GUEST_RUNTIME} above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}

const NODE_BUILTINS = new Set(builtinModules);

/**
 * What a twin imports the SDK as (`kit twin new` writes it so): mapped to this kit's own SDK
 * sources, so a twin project builds with no npm install. `twinkit/twin/testing` is for its
 * tests (Node), never bundled into a twin.
 */
export const SDK_ALIASES: Readonly<Record<string, string>> = {
  'twinkit/twin': join('sdk', 'twin', 'index.ts'),
  'twinkit/twin/testing': join('sdk', 'twin', 'test-world.ts'),
};

/** Resolves the SDK's `twinkit/…` names to the kit's files; `allowed` are the names this build may import. */
export function sdkAliasPlugin(allowed: readonly string[]): esbuild.Plugin {
  return {
    name: 'kit-sdk-alias',
    setup(build) {
      build.onResolve({ filter: /^twinkit(\/|$)/ }, (args) => {
        const file = SDK_ALIASES[args.path];
        if (file === undefined || !allowed.includes(args.path)) {
          return { errors: [{ text: `'${args.path}' is not part of the twin SDK here: import ${allowed.map((a) => `'${a}'`).join(' or ')}` }] };
        }
        return { path: join(repoRoot(), file) };
      });
    },
  };
}

/** Refuses Node built-ins by name, so the message says why instead of "could not resolve". */
const noNodePlugin: esbuild.Plugin = {
  name: 'kit-no-node',
  setup(build) {
    build.onResolve({ filter: /.*/ }, (args) => {
      const bare = args.path.startsWith('node:') ? args.path.slice(5) : args.path;
      if (args.path.startsWith('node:') || NODE_BUILTINS.has(bare.split('/')[0] ?? bare)) {
        return {
          errors: [{ text: `twin code runs in the sandbox and cannot import the Node module '${args.path}' (imported by ${args.importer || 'the entry'})` }],
        };
      }
      return undefined;
    });
  },
};

function invalid(entry: string, message: string, details: Record<string, unknown> = {}): KitError {
  return new KitError('invalid_twin', `twin ${entry}: ${message}`, { entry, ...details });
}

/** esbuild's messages as `file:line:column: text`, and where the first one points (for a status or an editor). */
export function buildFailure(e: unknown): { text: string; at?: { file: string; line: number; column: number } } {
  const failure = e as { errors?: esbuild.Message[] };
  if (!failure.errors?.length) return { text: e instanceof Error ? e.message : String(e) };
  const text = failure.errors.map((m) => (m.location ? `${m.location.file}:${m.location.line}:${m.location.column}: ${m.text}` : m.text)).join('; ');
  const first = failure.errors.find((m) => m.location)?.location;
  return first ? { text, at: { file: first.file, line: first.line, column: first.column } } : { text };
}

export interface BuildTwinOptions {
  /**
   * Whether the host trusts the twin's code (the built-in twins: default true). `false`, for a
   * twin from a user's sources: its manifest is read by loading it into an untrusted lane
   * (QuickJS, under the lane's memory, step and time budgets) and checked there
   * (`checkUntrustedTwin`), so a twin that loops or allocates at load is ended, not run in V8.
   */
  trusted?: boolean;
  /** The lane to read an untrusted twin's manifest in; default a new one, closed after. */
  lane?: UntrustedLane;
  /** Limits of that new lane (default the sandbox's). */
  limits?: Partial<SandboxLimits>;
  /** Vendor ids already served beside it: an untrusted twin claiming one is refused. */
  served?: readonly string[];
  /** Names the twin in errors; default the entry path as given. */
  label?: string;
}

/** Loads a trusted bundle in a `node:vm` context and asks it for its manifest. */
export function readManifest(source: string, label = 'bundle'): TwinManifestJson {
  const context = vm.createContext({});
  vm.runInContext(source, context, { filename: label, timeout: 5000 });
  const fn: unknown = vm.runInContext('typeof __kit_manifest === "function" ? __kit_manifest : undefined', context);
  if (typeof fn !== 'function') throw new Error(`${label} defines no __kit_manifest()`);
  const text: unknown = fn();
  if (typeof text !== 'string') throw new Error(`${label}: __kit_manifest() did not answer a string`);
  return JSON.parse(text) as TwinManifestJson;
}

/**
 * Bundles a twin: `entryFile` must `export default defineTwin({...})`. The result is one
 * script (iife, es2020, no Node) defining `__kit_manifest` and `__kit_invoke`.
 * Fails with KitError `invalid_twin` on a build error (e.g. a `node:` import), an entry
 * without a default export, or a definition `defineTwin` refuses.
 */
export async function buildTwin(entryFile: string, options: BuildTwinOptions = {}): Promise<BuiltTwin> {
  const entry = resolve(entryFile);
  const label = options.label ?? entryFile;
  if (!existsSync(entry)) throw invalid(label, `the entry file ${entry} does not exist`, { field: 'entry' });
  const root = repoRoot();
  const runtime = join(root, GUEST_RUNTIME);
  const stdin = [
    `import * as twinModule from ${JSON.stringify(entry)};`,
    `import { installTwin } from ${JSON.stringify(runtime)};`,
    'const def = twinModule.default;',
    "if (def === undefined) throw new TypeError('the twin entry has no default export (export default defineTwin({...}))');",
    'installTwin(def);',
  ].join('\n');
  let result: esbuild.BuildResult & { outputFiles: esbuild.OutputFile[] };
  try {
    result = await esbuild.build({
      stdin: { contents: stdin, resolveDir: dirname(entry), sourcefile: 'kit-twin-entry.js', loader: 'js' },
      bundle: true,
      format: 'iife',
      target: 'es2020',
      platform: 'neutral',
      mainFields: ['module', 'main'],
      conditions: ['import', 'default'],
      write: false,
      logLevel: 'silent',
      legalComments: 'none',
      charset: 'utf8',
      plugins: [sdkAliasPlugin(['twinkit/twin']), noNodePlugin],
    });
  } catch (e) {
    const { text, at } = buildFailure(e);
    throw invalid(label, `build failed: ${text}`, { field: 'source', ...at });
  }
  const source = result.outputFiles[0]?.text;
  if (source === undefined) throw invalid(label, 'esbuild produced no output');
  if (options.trusted === false) {
    const manifest = await untrustedManifest(source, label, options);
    return { vendor: manifest.vendor, source, manifest, trusted: false };
  }
  let manifest: TwinManifestJson;
  try {
    manifest = readManifest(source, entry);
  } catch (e) {
    throw invalid(label, `loading the bundle failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  // Every attach to the twin's world would refuse a variable no world may set: said here, once.
  const refused = (manifest.models.endpointEnv ?? []).filter((name) => !envNameAllowed(name));
  if (refused.length > 0) {
    throw invalid(label, `models.endpointEnv names ${refused.join(', ')}, which no world may set for an app (docs/attach.md, "What a world may ask"): an endpoint variable ends in _URL, _URI, _BASE, _HOST, _PORT, _ENDPOINT or _ADDR`);
  }
  return { vendor: manifest.vendor, source, manifest };
}

/** An untrusted bundle's manifest, read and checked in a lane (the caller's, or one of its own). */
async function untrustedManifest(source: string, label: string, options: BuildTwinOptions): Promise<TwinManifestJson> {
  const lane = options.lane ?? new SandboxLane({ name: `twin build ${label}`, ...(options.limits ? { limits: options.limits } : {}) });
  try {
    const manifest = await checkUntrustedTwin(lane, source, { label: `twin ${label}`, ...(options.served ? { served: options.served } : {}) });
    const refused = (manifest.models.endpointEnv ?? []).filter((name) => !envNameAllowed(name));
    if (refused.length > 0) {
      throw invalid(label, `models.endpointEnv names ${refused.join(', ')}, which no world may set for an app: an endpoint variable ends in _URL, _URI, _BASE, _HOST, _PORT, _ENDPOINT or _ADDR`, { label: `twin ${label}`, field: 'models.endpointEnv' });
    }
    return manifest;
  } finally {
    if (options.lane === undefined) await lane.close();
  }
}

let guestRuntime: Promise<string> | undefined;

/**
 * The guest runtime alone, as one sandbox script defining `__kit_install_twin(def)`: for twin
 * definitions made at run time (a scenario's JavaScript handlers), which the runner appends as
 * `__kit_install_twin({...})`. The definition goes through `defineTwin`, so a bad one throws
 * while the script loads; its tree may write the scenarios' `scenario.*` types. Built once per
 * process.
 */
export function buildGuestRuntime(): Promise<string> {
  if (!guestRuntime) {
    const root = repoRoot();
    const contents = [
      `import { installTwin } from ${JSON.stringify(join(root, GUEST_RUNTIME))};`,
      `import { defineTwin } from ${JSON.stringify(join(root, 'sdk', 'twin', 'define.ts'))};`,
      'globalThis.__kit_install_twin = (def) => installTwin(defineTwin(def), { scenario: true });',
    ].join('\n');
    guestRuntime = esbuild
      .build({
        stdin: { contents, resolveDir: root, sourcefile: 'kit-guest-runtime.js', loader: 'js' },
        bundle: true,
        format: 'iife',
        target: 'es2020',
        platform: 'neutral',
        write: false,
        logLevel: 'silent',
        legalComments: 'none',
        charset: 'utf8',
        plugins: [noNodePlugin],
      })
      .then((r) => {
        const text = r.outputFiles[0]?.text;
        if (text === undefined) throw new Error('guest runtime build produced no output');
        return text;
      });
    guestRuntime.catch(() => {
      guestRuntime = undefined;
    });
  }
  return guestRuntime;
}

let builtins: Promise<Map<string, BuiltTwin>> | undefined;

/**
 * Every built-in twin (listed in `twins/index.ts`), built once per process, by vendor.
 * A failed build is not cached, so the next call tries again.
 */
export function loadBuiltinTwins(): Promise<Map<string, BuiltTwin>> {
  if (!builtins) {
    const root = repoRoot();
    builtins = (async () => {
      const out = new Map<string, BuiltTwin>();
      for (const relative of builtinTwinEntries) {
        const built = await buildTwin(isAbsolute(relative) ? relative : join(root, relative));
        if (out.has(built.manifest.vendor)) throw invalid(relative, `a second built-in twin for vendor '${built.manifest.vendor}'`);
        // Built-in twins ship with twinkit: the runner may run them in V8 (runtime/sandbox/trusted.ts).
        out.set(built.manifest.vendor, { ...built, trusted: true });
      }
      return out;
    })();
    builtins.catch(() => {
      builtins = undefined;
    });
  }
  return builtins;
}
