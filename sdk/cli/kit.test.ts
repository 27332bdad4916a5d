/**
 * The `kit` executable as a process: shebang, streams and exit codes. Bundled with
 * esbuild into a temporary folder inside the repository (so node_modules resolves);
 * uWS, the runner and the twin build are loaded lazily and never touched here.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as esbuild from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintTokens, startSingleWorldServer } from '../../host/index.js';
import type { SingleWorldServer } from '../../host/index.js';
import { openTestWorld } from '../../test/helpers/world.js';
import { SERVE_USAGE } from './serve.js';
import { USAGE } from './main.js';

const run = promisify(execFile);
let dir: string;
let kit: string;

beforeAll(async () => {
  dir = await mkdtemp(join(process.cwd(), 'sdk', 'cli', '.kit-test-'));
  kit = join(dir, 'kit.mjs');
  await esbuild.build({
    entryPoints: [join(process.cwd(), 'sdk', 'cli', 'kit.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outfile: kit,
    logLevel: 'silent',
  });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function kitRun(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [kit, ...args], { encoding: 'utf8' });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const f = e as { code: number; stdout: string; stderr: string };
    return { code: f.code, stdout: f.stdout, stderr: f.stderr };
  }
}

describe('the kit executable', () => {
  it('starts with a node shebang', async () => {
    expect((await readFile(join(process.cwd(), 'sdk', 'cli', 'kit.ts'), 'utf8')).startsWith('#!/usr/bin/env node\n')).toBe(true);
  });

  it('prints help on stdout with exit 0', async () => {
    expect(await kitRun(['--help'])).toEqual({ code: 0, stdout: `${USAGE}\n`, stderr: '' });
    expect(await kitRun(['world', 'serve', '-h'])).toEqual({ code: 0, stdout: `${SERVE_USAGE}\n`, stderr: '' });
  });

  it('answers a bad flag on stderr with one line and the usage, exit 2', async () => {
    const r = await kitRun(['world', 'serve', '--prot', '1']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`kit: unknown flag --prot\n\n${SERVE_USAGE}\n`);
  });

  it('prints the package version', async () => {
    const pkg = JSON.parse(await readFile(join(process.cwd(), 'package.json'), 'utf8')) as { version: string };
    // The bundle sits three levels below the repository, as dist/sdk/cli/kit.js does.
    expect(await kitRun(['--version'])).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
  });
});

/** The environment without the developer's own KIT_* (a test names its world itself). */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('KIT_')) env[k] = v;
  return { ...env, ...extra };
}

interface Spawned {
  code: Promise<number | null>;
  stdout: Buffer[];
  stderr: Buffer[];
  child: ReturnType<typeof spawn>;
}

/** `kit <args>` as a process with pipes for its three streams. */
function spawnKit(args: string[], stdin?: string, env: NodeJS.ProcessEnv = cleanEnv()): Spawned {
  const child = spawn(process.execPath, [kit, ...args], { env, cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => stdout.push(b));
  child.stderr.on('data', (b: Buffer) => stderr.push(b));
  child.stdout.on('error', () => {});
  if (stdin !== undefined) child.stdin.end(stdin);
  else child.stdin.end();
  const code = new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  return { code, stdout, stderr, child };
}

describe('the kit executable against a world', () => {
  const tokens = mintTokens();
  let server: SingleWorldServer;
  const flags = (): string[] => ['--world', server.worldUrl, '--token', tokens.token];

  beforeAll(async () => {
    const world = await openTestWorld({ vendors: ['hello'], world: 'shop' });
    server = await startSingleWorldServer({ world: world.runner, org: 'local', worldName: 'shop', tokens, twins: [{ vendor: 'hello', requestScopes: [] }] });
    const made = await fetch(`${server.worldUrl}/hello/v1/greetings`, { method: 'POST', headers: { authorization: `Bearer ${tokens.token}`, 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=Ada' });
    expect(made.status).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('writes a checkpoint to a pipe as bytes and its size to stderr', async () => {
    const run = spawnKit(['world', 'checkpoint', 'hello', ...flags()]);
    expect(await run.code).toBe(0);
    const bytes = Buffer.concat(run.stdout);
    expect(JSON.parse(bytes.toString('utf8'))).toMatchObject({ position: 1 });
    expect(Buffer.concat(run.stderr).toString('utf8')).toBe(`kit: wrote ${bytes.length} bytes: the checkpoint of hello\n`);
  });

  it('reads a scenario from stdin, and prints a refused one on one line of stderr with exit 1', async () => {
    const good = spawnKit(['world', 'scenario', 'put', 'hello', ...flags()], 'handlers:\n  - match: GET /v1/greetings\n    respond: { status: 503 }\n');
    expect(await good.code).toBe(0);
    expect(Buffer.concat(good.stdout).toString('utf8')).toMatch(/^kit: the scenario of hello is in force: 1 handler \(yaml\)/);
    const bad = spawnKit(['world', 'scenario', 'put', 'hello', ...flags()], 'handlers:\n  - match: GET /v1/greetings\n    times: many\n    respond: { status: 503 }\n');
    expect(await bad.code).toBe(1);
    expect(Buffer.concat(bad.stdout).toString('utf8')).toBe('');
    const err = Buffer.concat(bad.stderr).toString('utf8');
    expect(err).toMatch(/^kit: handlers\[0\]\.times: .* \(invalid_scenario\)\n$/);
    expect((await kitRun(['world', 'scenario', 'rm', 'hello', ...flags()])).code).toBe(0);
  });

  it('finds the world in KIT_WORLD and KIT_WORLD_TOKEN', async () => {
    const run = spawnKit(['world', 'clock', '--json'], undefined, cleanEnv({ KIT_WORLD: server.worldUrl, KIT_WORLD_TOKEN: tokens.token }));
    expect(await run.code).toBe(0);
    expect(JSON.parse(Buffer.concat(run.stdout).toString('utf8'))).toMatchObject({ frozen: false });
  });

  it('names the URL it cannot reach on one line of stderr, exit 1', async () => {
    const s = createServer();
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    const port = (s.address() as { port: number }).port;
    await new Promise((resolve) => s.close(resolve));
    const r = await kitRun(['world', 'map', '--world', `http://127.0.0.1:${port}/local/shop`, '--token', tokens.token]);
    expect(r).toEqual({ code: 1, stdout: '', stderr: `kit: cannot reach http://127.0.0.1:${port}/-/local/shop/map: connection refused (unreachable)\n` });
  });

  it('timeline --follow stops on SIGINT with exit 0, and ends quietly when its reader goes away', async () => {
    const run = spawnKit(['world', 'timeline', '--follow', '--interval', '0.05', ...flags()]);
    while (!Buffer.concat(run.stdout).toString('utf8').includes('POST /hello/v1/greetings')) await new Promise((r) => setTimeout(r, 20));
    run.child.kill('SIGINT');
    expect(await run.code).toBe(0);
    expect(Buffer.concat(run.stderr).toString('utf8')).toBe('');

    // `kit world timeline --follow | head -2`: head exits, the next line kit writes meets a closed pipe.
    const piped = spawnKit(['world', 'timeline', '--follow', '--interval', '0.05', ...flags()]);
    while (piped.stdout.length === 0) await new Promise((r) => setTimeout(r, 20));
    piped.child.stdout?.destroy();
    const more = await fetch(`${server.worldUrl}/hello/v1/greetings`, { method: 'POST', headers: { authorization: `Bearer ${tokens.token}`, 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=Grace' });
    expect(more.status).toBe(200);
    expect(await piped.code).toBe(0);
    expect(Buffer.concat(piped.stderr).toString('utf8')).toBe('');
  });
});
