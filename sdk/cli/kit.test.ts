/**
 * The `kit` executable as a process: shebang, streams and exit codes. Bundled with
 * esbuild into a temporary folder inside the repository (so node_modules resolves);
 * uWS, the runner and the twin build are loaded lazily and never touched here.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as esbuild from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
