/**
 * `kit twin test [dir]`: builds the twin from its sources, serves it in a real world on this
 * machine (the single-world server of `kit world serve`, the twin untrusted in QuickJS as a
 * world serves it, state in a temporary folder), sets the world clock, bundles the project's
 * test files and runs them with `node --test`, the world's URL and token in their environment
 * (`world()` of `twinkit/twin/testing` reads it). Exit code and output are node --test's.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { isKitError } from '../../runtime/errors.js';
import type { LocalWorldOptions, TwinBundle, WorldHandle } from '../../runtime/runner/types.js';
import { CliError } from './client.js';
import type { CliIo } from './commands.js';
import { serveWorld } from './serve.js';

export interface TwinTestOptions {
  /** The project folder (absolute). */
  dir: string;
  /** Where relative paths in messages start (the caller's directory). */
  cwd: string;
  /** The instant the world clock is set to before the tests run (ISO 8601). */
  now: string;
  /** node --test's reporter (`spec`, `tap`, `dot`, …). */
  reporter: string;
  /** Only the test files whose path (relative to the project) contains one of these. */
  only: readonly string[];
}

export interface TwinTestDeps {
  openWorld(options: LocalWorldOptions): Promise<WorldHandle>;
  /** The environment the tests inherit (the world's variables are added to it). */
  env: NodeJS.ProcessEnv;
  /** Resolves on Ctrl-C or SIGTERM: the tests are stopped, and the world and its folder removed. */
  untilStopped?: () => Promise<string>;
}

export const DEFAULT_TEST_NOW = '2026-01-01T00:00:00.000Z';

/** Builds the twin untrusted, or fails with its build error (`invalid_twin`, the file and place). */
export async function buildUserTwin(dir: string, cwd: string): Promise<TwinBundle> {
  const { twinEntry } = await import('../twin/project.js');
  const { buildTwin } = await import('../twin/build.js');
  const entry = twinEntry(dir);
  if (entry === null) throw new CliError('no_twin', `no twin in ${dir}: a twin project has twin/index.ts (kit twin new <vendor> makes one)`);
  try {
    return await buildTwin(entry, { trusted: false, label: relative(cwd, entry) || entry });
  } catch (e) {
    if (isKitError(e)) throw new CliError(e.code, e.message, e.details !== undefined ? { details: e.details } : {});
    throw e;
  }
}

/** Streams a child's output to `line`, one line at a time; resolves at its end. */
function pipeLines(stream: NodeJS.ReadableStream, line: (text: string) => void): Promise<void> {
  return new Promise((done) => {
    const lines = createInterface({ input: stream, crlfDelay: Infinity });
    lines.on('line', line);
    lines.on('close', done);
  });
}

export async function runTwinTests(options: TwinTestOptions, io: CliIo, deps: TwinTestDeps): Promise<number> {
  const { twinTestFiles, bundleTwinTests } = await import('../twin/project.js');
  const twin = await buildUserTwin(options.dir, options.cwd);
  const all = twinTestFiles(options.dir);
  const files = options.only.length === 0 ? all : all.filter((f) => options.only.some((part) => relative(options.dir, f).includes(part)));
  if (files.length === 0) {
    throw new CliError('no_tests', all.length === 0 ? `no tests in ${join(options.dir, 'test')}: a test file is test/<name>.test.ts` : `no test file matches ${options.only.join(', ')}`);
  }
  io.out(`kit: built twin ${twin.vendor} ${twin.manifest.version} (${twin.manifest.routes.length} routes); serving it in a world to run ${files.length} test file${files.length === 1 ? '' : 's'}`);

  const scratch = await mkdtemp(join(tmpdir(), `kit-twin-test-${twin.vendor}-`));
  try {
    let bundles: string[];
    try {
      bundles = await bundleTwinTests(options.dir, files, join(scratch, 'tests'));
    } catch (e) {
      throw new CliError('test_build_failed', `the tests did not build: ${e instanceof Error ? e.message : String(e)}`);
    }
    const worldDir = join(scratch, 'world');
    await mkdir(worldDir);
    const serving = await serveWorld(
      { dir: worldDir, port: 0, proxyPort: 0, host: '127.0.0.1', org: 'local', world: `${twin.vendor}-test`, twins: [twin.vendor] },
      { loadTwins: async () => new Map([[twin.vendor, twin]]), openWorld: deps.openWorld },
    );
    try {
      const clock = await fetch(`${serving.server.worldApi}/clock`, {
        method: 'PUT',
        headers: { 'x-kit-token': serving.tokens.token, 'content-type': 'application/json' },
        body: JSON.stringify({ at: options.now }),
      });
      if (!clock.ok) throw new CliError('invalid_instant', `the world refused the clock ${options.now}: ${await clock.text()}`);
      const env: NodeJS.ProcessEnv = {
        ...deps.env,
        KIT_WORLD: serving.server.worldUrl,
        KIT_WORLD_API: serving.server.worldApi,
        KIT_WORLD_TOKEN: serving.tokens.token,
        KIT_WORLD_READ_TOKEN: serving.tokens.readToken,
        KIT_TWIN: twin.vendor,
      };
      // One world for the run: the files run one after another, so none sees another's clock move.
      const args = ['--test', '--test-concurrency=1', `--test-reporter=${options.reporter}`, '--enable-source-maps', ...bundles];
      const child = spawn(process.execPath, args, { cwd: options.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      const exited = new Promise<number>((done, fail) => {
        child.on('error', fail);
        child.on('close', (code, signal) => done(code ?? (signal !== null ? 1 : 0)));
      });
      let stopped: string | null = null;
      void deps.untilStopped?.().then((signal) => {
        stopped = signal;
        child.kill('SIGINT');
      });
      await Promise.all([pipeLines(child.stdout, io.out), pipeLines(child.stderr, io.err)]);
      const code = await exited;
      if (stopped !== null) {
        io.err(`kit: ${stopped}: the tests were stopped; the world and its folder are removed`);
        return 130;
      }
      return code;
    } finally {
      await serving.server.close();
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
