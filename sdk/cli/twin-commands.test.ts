/**
 * `kit twin new|build|test` through `main`, with the real world (openLocalWorld, the twin in
 * QuickJS) and the real `node --test`: a project made by `kit twin new` builds and passes its
 * own tests as made; an edit that breaks it fails `kit twin test` with the build error.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalWorld } from '../../runtime/runner/index.js';
import { buildGuestRuntime } from '../twin/build.js';
import { main } from './main.js';
import type { CliDeps } from './main.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'kit-twin-cli-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

interface Run {
  code: number;
  out: string[];
  err: string[];
}

async function kit(argv: string[], cwd: string): Promise<Run> {
  const out: string[] = [];
  const err: string[] = [];
  const deps: CliDeps = {
    version: 'test',
    loadTwins: async () => new Map(),
    openWorld: async (options) => openLocalWorld({ ...options, guestRuntime: await buildGuestRuntime() }),
    untilStopped: () => new Promise(() => {}),
    client: { cwd, env: { PATH: process.env['PATH'] ?? '' } },
  };
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, deps);
  return { code, out, err };
}

describe('kit twin new', () => {
  it('makes the project in twins/<vendor>, in the shape of a twin, with the vendor put in', async () => {
    const cwd = join(root, 'app');
    await mkdir(cwd);
    const made = await kit(['twin', 'new', 'acme-pay'], cwd);
    expect(made.err).toEqual([]);
    expect(made.code).toBe(0);
    expect(made.out[0]).toBe('kit: made twin acme-pay in twins/acme-pay/ (12 files)');
    const index = await readFile(join(cwd, 'twins', 'acme-pay', 'twin', 'index.ts'), 'utf8');
    expect(index).toContain("vendor: 'acme-pay'");
    expect(index).toContain("endpointEnv: ['ACME_PAY_API_URL']");
    expect(index).toContain("from 'twinkit/twin'");
    expect(index).not.toContain('kitvendor');
    const config = JSON.parse(await readFile(join(cwd, 'twins', 'acme-pay', 'tsconfig.json'), 'utf8')) as { compilerOptions: { paths: Record<string, string[]> } };
    expect(Object.keys(config.compilerOptions.paths)).toEqual(['twinkit/twin', 'twinkit/twin/testing', 'twinkit/twin/codec']);
  });

  it('refuses a vendor id that is not one, and a built-in twin\'s, writing nothing', async () => {
    const cwd = join(root, 'refusals');
    await mkdir(cwd);
    for (const [vendor, code] of [['Acme', 'invalid_vendor'], ['a', 'invalid_vendor'], ['acme/../x', 'invalid_vendor'], ['stripe', 'twin_exists']] as const) {
      const run = await kit(['twin', 'new', vendor], cwd);
      expect([run.code, run.err.length]).toEqual([1, 1]);
      expect(run.err[0]).toMatch(new RegExp(`\\(${code}\\)$`));
    }
    await expect(readFile(join(cwd, 'twins', 'stripe', 'twin', 'index.ts'))).rejects.toThrow();
  });

  it('refuses a folder that is not empty, and fills an empty one', async () => {
    const cwd = join(root, 'folders');
    await mkdir(join(cwd, 'busy'), { recursive: true });
    await writeFile(join(cwd, 'busy', 'keep.txt'), 'mine');
    const busy = await kit(['twin', 'new', 'acme', 'busy'], cwd);
    expect(busy.code).toBe(1);
    expect(busy.err[0]).toMatch(/busy exists and is not empty .*\(dir_not_empty\)$/);
    expect(await readFile(join(cwd, 'busy', 'keep.txt'), 'utf8')).toBe('mine');
    await mkdir(join(cwd, 'empty'));
    expect((await kit(['twin', 'new', 'acme', 'empty'], cwd)).code).toBe(0);
  });
});

describe('a project as kit twin new makes it', () => {
  let cwd: string;
  let dir: string;
  beforeAll(async () => {
    cwd = join(root, 'made');
    await mkdir(cwd);
    expect((await kit(['twin', 'new', 'acme'], cwd)).code).toBe(0);
    dir = join(cwd, 'twins', 'acme');
  });

  it('passes its own tests against the twin served in a world', async () => {
    const run = await kit(['twin', 'test', 'twins/acme'], cwd);
    expect(run.err).toEqual([]);
    expect(run.out[0]).toBe('kit: built twin acme 0.1.0 (5 routes); serving it in a world to run 2 test files');
    expect(run.out).toContain('ℹ pass 7');
    expect(run.out).toContain('ℹ fail 0');
    expect(run.code).toBe(0);
  }, 60_000);

  it('builds the bundle a host installs, its manifest read in the sandbox', async () => {
    const run = await kit(['twin', 'build', 'twins/acme', '--json'], cwd);
    expect(run.code).toBe(0);
    const answer = JSON.parse(run.out[0] ?? '') as { vendor: string; file: string; bytes: number; sha256: string; manifest: { routes: unknown[]; stores: string[]; moves: string[] } };
    expect(answer).toMatchObject({ vendor: 'acme', file: join(dir, 'dist', 'acme.js'), manifest: { stores: ['widgets'], moves: ['activate'] } });
    expect(answer.manifest.routes).toHaveLength(5);
    const bundle = await readFile(answer.file, 'utf8');
    expect([Buffer.byteLength(bundle), createHash('sha256').update(bundle).digest('hex')]).toEqual([answer.bytes, answer.sha256]);
    expect(bundle).toContain('__kit_invoke');
  });

  it('fails kit twin test on a test that fails, with node --test\'s exit code and report', async () => {
    await writeFile(join(dir, 'test', 'wrong.test.ts'), [
      "import assert from 'node:assert/strict';",
      "import { test } from 'node:test';",
      "import { world } from 'twinkit/twin/testing';",
      "test('expects another vendor', async () => { assert.equal((await world().manifest()).vendor, 'not-acme'); });",
    ].join('\n'));
    try {
      const run = await kit(['twin', 'test', 'twins/acme', '--only', 'wrong'], cwd);
      expect(run.code).toBe(1);
      expect(run.out[0]).toContain('to run 1 test file');
      expect(run.out).toContain('ℹ fail 1');
      // The failure points at the test's own source (the bundle's source map).
      expect(run.out.join('\n')).toContain('wrong.test.ts:4');
    } finally {
      await rm(join(dir, 'test', 'wrong.test.ts'));
    }
  }, 60_000);

  it('fails kit twin test with the build error when an edit breaks the twin, and runs no test', async () => {
    const file = join(dir, 'twin', 'stores.ts');
    const before = await readFile(file, 'utf8');
    await writeFile(file, before.replace('export const widgetsStore', 'export const widgetsStore = ;\nconst unused'));
    try {
      const run = await kit(['twin', 'test', 'twins/acme'], cwd);
      expect(run.code).toBe(1);
      expect(run.out).toEqual([]);
      expect(run.err).toHaveLength(1);
      expect(run.err[0]).toMatch(/^kit: twin twins\/acme\/twin\/index\.ts: build failed: .*twins\/acme\/twin\/stores\.ts:\d+:\d+: .*\(invalid_twin\)$/);
      const build = await kit(['twin', 'build', 'twins/acme'], cwd);
      expect([build.code, build.err]).toEqual([1, run.err]);
    } finally {
      await writeFile(file, before);
    }
  });

  it('fails on routes that clash, naming the field', async () => {
    const file = join(dir, 'twin', 'index.ts');
    const before = await readFile(file, 'utf8');
    await writeFile(file, before.replace("{ name: 'widgets.delete',", "{ name: 'widgets.get', match: { method: 'GET', path: '/v1/widgets/:key' }, handle: retrieveWidget },\n    { name: 'widgets.delete',"));
    try {
      const run = await kit(['twin', 'build', 'twins/acme'], cwd);
      expect(run.code).toBe(1);
      expect(run.err[0]).toContain("routes[4] ('widgets.get') clashes with routes[2] ('widgets.retrieve')");
      expect(run.err[0]).toMatch(/\(invalid_twin\)$/);
    } finally {
      await writeFile(file, before);
    }
  });
});
