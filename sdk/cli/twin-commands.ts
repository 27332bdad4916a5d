/**
 * `kit twin <command>`: writing a twin of your own. `new` makes a project from the kit's template
 * (sdk/twin/template/), `build` writes the bundle script a host installs, `test` runs the
 * project's tests against the twin served in a real world (twin-test.ts). The twin tools
 * (esbuild, the sandbox) are imported when a command runs, so `kit --help` does not pay for them.
 */
import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { LocalWorldOptions, WorldHandle } from '../../runtime/runner/types.js';
import { builtinTwinEntries } from '../../twins/index.js';
import { UsageError } from './args.js';
import { CliError } from './client.js';
import { flag } from './commands.js';
import type { ClientDeps, Command, CommandGroup, Invocation } from './commands.js';
import { printable } from './format.js';
import { buildUserTwin, DEFAULT_TEST_NOW, runTwinTests } from './twin-test.js';

export interface TwinTarget {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Opens the world `kit twin test` serves the twin in; absent, `test` cannot run. */
  openWorld?: (options: LocalWorldOptions) => Promise<WorldHandle>;
  untilStopped: () => Promise<string>;
}

/** The vendor ids of the built-in twins (`twins/<vendor>/twin/index.ts`): a twin of one's own may not take one. */
function builtinVendors(): string[] {
  return builtinTwinEntries.map((entry) => entry.split('/')[1] ?? '').filter((v) => v !== '');
}

function within(t: TwinTarget, path: string): string {
  return isAbsolute(path) ? path : resolve(t.cwd, path);
}

/** A path for a message: relative to the caller's directory when it is below it. */
function shown(t: TwinTarget, path: string): string {
  const rel = relative(t.cwd, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

function projectDir(t: TwinTarget, call: Invocation): string {
  return within(t, call.args[0] ?? '.');
}

const commands: Command<TwinTarget>[] = [
  {
    words: ['new'],
    args: '<vendor> [dir]',
    summary: 'make a twin project from the template: one resource, a store, a timed move, tests',
    help: [
      'The project lands in <dir> (default twins/<vendor>, the place a kit.world.yaml names with',
      'path: twins/<vendor>), which must be missing or empty. It builds and passes its tests as made:',
      'cd into it and run kit twin test. docs/twins.md walks from here to a twin served in a world.',
    ].join('\n'),
    arity: [1, 2],
    async run(t, call) {
      const vendor = call.args[0] as string;
      const { VENDOR_ID, folderRefusal, makeTwinProject } = await import('../twin/project.js');
      if (!VENDOR_ID.test(vendor)) {
        throw new CliError('invalid_vendor', `${JSON.stringify(printable(vendor))} is not a vendor id: 2 to 40 characters, a lower-case letter first, then lower-case letters, digits and '-' (acme, my-payments)`);
      }
      if (builtinVendors().includes(vendor)) {
        throw new CliError('twin_exists', `${vendor} is a built-in twin's vendor id: a world serves one twin per vendor id; choose another (${vendor}-twin, my-${vendor})`);
      }
      const dir = within(t, call.args[1] ?? join('twins', vendor));
      const refusal = folderRefusal(dir);
      if (refusal !== null) throw new CliError('dir_not_empty', refusal);
      const files = makeTwinProject(vendor, dir);
      if (call.json) {
        call.io.out(JSON.stringify({ vendor, dir, files }));
        return 0;
      }
      const where = shown(t, dir);
      call.io.out(`kit: made twin ${vendor} in ${where}/ (${files.length} files)`);
      call.io.out('');
      call.io.out('Next:');
      call.io.out(`  cd ${where} && kit twin test     build it, serve it in a world, run test/*.test.ts`);
      call.io.out(`  kit twin build ${where}           the bundle a host installs`);
      call.io.out(`  serve it beside your app: kit.world.yaml  twins: { ${vendor}: { path: ${where} } }`);
      call.io.out('  docs/twins.md walks through writing it');
      return 0;
    },
  },
  {
    words: ['build'],
    args: '[dir]',
    summary: "bundle a twin from its sources into the one script a host installs, checked as a host checks it",
    help: 'The twin is <dir>/twin/index.ts (default: the current directory), or the entry file named. Its manifest is read in the sandbox, as a host reads it. A build error names the file, line and column (invalid_twin).',
    flags: [{ name: 'out', short: 'o', kind: 'string', value: 'FILE', help: 'where to write the bundle (default <dir>/dist/<vendor>.js)' }],
    arity: [0, 1],
    async run(t, call) {
      const dir = projectDir(t, call);
      const twin = await buildUserTwin(dir, t.cwd);
      const out = flag(call, 'out');
      // Beside the project's twin/ (or beside the entry file named).
      const base = existsSync(dir) && statSync(dir).isFile() ? dirname(dir) : dir;
      const file = out !== undefined ? within(t, out) : join(base, 'dist', `${twin.vendor}.js`);
      try {
        await mkdir(dirname(file), { recursive: true });
        await writeFile(file, twin.source);
      } catch (e) {
        throw new CliError('unwritable_file', `cannot write ${file}: ${e instanceof Error ? e.message : String(e)}`);
      }
      const bytes = Buffer.byteLength(twin.source);
      const sha256 = createHash('sha256').update(twin.source).digest('hex');
      const m = twin.manifest;
      if (call.json) {
        call.io.out(JSON.stringify({ vendor: twin.vendor, version: m.version, file, bytes, sha256, manifest: m }));
        return 0;
      }
      const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;
      call.io.out(`kit: built twin ${twin.vendor} ${printable(m.version)}: ${count(m.routes.length, 'route')}, ${count(m.stores.length, 'store')}, ${count(m.moves.length, 'move')}`);
      call.io.out(`  bundle   ${shown(t, file)}  (${(bytes / 1024).toFixed(1)} kB, sha256 ${sha256})`);
      call.io.out(`  install  kit host twin install <host url> ${shown(t, file)}`);
      return 0;
    },
  },
  {
    words: ['test'],
    args: '[dir]',
    summary: "run a twin's tests (test/*.test.ts, node:test) against it, served in a real world",
    help: [
      'Builds the twin (as kit twin build), serves it untrusted in QuickJS in a fresh world on this',
      'machine (its state in a temporary folder, gone after), sets the world clock to --now, then runs',
      'each test file with node --test, one file after another, in that one world. A test reads the',
      "world's URL, token and clock with world() from twinkit/twin/testing (docs/twins.md). With --only,",
      'only the test files whose path contains one of the words run. The exit code is node --test\'s;',
      'a twin or a test file that does not build fails before any test runs (exit 1).',
    ].join('\n'),
    flags: [
      { name: 'now', kind: 'string', value: 'INSTANT', help: `the world clock when the tests start (default ${DEFAULT_TEST_NOW})` },
      { name: 'reporter', kind: 'string', value: 'R', help: "node --test's reporter: spec (default), tap, dot, junit" },
      { name: 'only', kind: 'list', value: 'WORD', help: 'run only the test files whose path contains WORD (repeatable)' },
    ],
    arity: [0, 1],
    async run(t, call) {
      if (t.openWorld === undefined) throw new CliError('no_world', 'this kit cannot open a world to test in');
      const dirArg = call.args[0];
      const only = call.lists['only'] ?? [];
      const now = flag(call, 'now') ?? DEFAULT_TEST_NOW;
      if (!Number.isFinite(Date.parse(now))) throw new UsageError(`--now must be an ISO 8601 instant, got "${now}"`);
      const reporter = flag(call, 'reporter') ?? 'spec';
      if (!/^[a-z][a-z-]{0,31}$/.test(reporter)) throw new UsageError(`--reporter names one of node --test's reporters (spec, tap, dot, junit), got "${reporter}"`);
      return runTwinTests({ dir: within(t, dirArg ?? '.'), cwd: t.cwd, now: new Date(now).toISOString(), reporter, only }, call.io, { openWorld: t.openWorld, env: t.env, untilStopped: t.untilStopped });
    },
  },
];

/** The `kit twin` group; `openWorld` is what `kit twin test` serves the twin with. */
export function twinCommands(openWorld?: TwinTarget['openWorld']): CommandGroup<TwinTarget> {
  return {
    name: 'twin',
    commands,
    flags: [],
    footer: [
      'A twin project is the folder kit twin new makes: twin/index.ts (the entry), test/*.test.ts, a README.',
      'Its code imports the SDK as twinkit/twin; the build maps that to this kit, so nothing is installed.',
      'A failure prints one line, kit: <message> (<code>), and exits 1; bad usage exits 2. See docs/twins.md.',
    ].join('\n'),
    target: async (_flags, deps: ClientDeps) => ({ cwd: deps.cwd, env: deps.env, untilStopped: deps.untilStopped, ...(openWorld !== undefined ? { openWorld } : {}) }),
  };
}
