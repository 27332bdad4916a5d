/**
 * The twin build (Node side): bundles a twin's entry file and the guest runtime into one
 * sandbox script with esbuild, and reads its manifest back. Built-in twins are listed in
 * `twins/index.ts`.
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

/** A built twin: `{ vendor, source, manifest }` (the runner's `TwinBundle`). */
export type BuiltTwin = TwinBundle;

const GUEST_RUNTIME = join('sdk', 'twin', 'guest', 'runtime.ts');

/**
 * The repository root: the nearest ancestor of this module holding the guest runtime's source.
 * Works from the sources (tests) and from `dist/` (the guest sources are not compiled there).
 */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, GUEST_RUNTIME))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`twin build: cannot find ${GUEST_RUNTIME} above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}

const NODE_BUILTINS = new Set(builtinModules);

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

function invalid(entry: string, message: string): KitError {
  return new KitError('invalid_twin', `twin ${entry}: ${message}`, { entry });
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
export async function buildTwin(entryFile: string): Promise<BuiltTwin> {
  const entry = resolve(entryFile);
  if (!existsSync(entry)) throw invalid(entryFile, 'the entry file does not exist');
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
      plugins: [noNodePlugin],
    });
  } catch (e) {
    const failure = e as { errors?: esbuild.Message[] };
    const text = failure.errors?.length
      ? failure.errors.map((m) => (m.location ? `${m.location.file}:${m.location.line}:${m.location.column}: ${m.text}` : m.text)).join('; ')
      : e instanceof Error ? e.message : String(e);
    throw invalid(entryFile, `build failed: ${text}`);
  }
  const source = result.outputFiles[0]?.text;
  if (source === undefined) throw invalid(entryFile, 'esbuild produced no output');
  let manifest: TwinManifestJson;
  try {
    manifest = readManifest(source, entry);
  } catch (e) {
    throw invalid(entryFile, `loading the bundle failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  // Every attach to the twin's world would refuse a variable no world may set: said here, once.
  const refused = (manifest.models.endpointEnv ?? []).filter((name) => !envNameAllowed(name));
  if (refused.length > 0) {
    throw invalid(entryFile, `models.endpointEnv names ${refused.join(', ')}, which no world may set for an app (docs/attach.md, "What a world may ask"): an endpoint variable ends in _URL, _URI, _BASE, _HOST, _PORT, _ENDPOINT or _ADDR`);
  }
  return { vendor: manifest.vendor, source, manifest };
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
