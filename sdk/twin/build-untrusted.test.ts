/**
 * `buildTwin(entry, { trusted: false })`: a twin from a user's sources, its manifest read in the
 * QuickJS sandbox under the lane's budgets. Each bad input is a KitError `invalid_twin` naming
 * the file and the field.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { KitError } from '../../runtime/errors.js';
import { SandboxLane } from '../../runtime/lane/lane.js';
import { buildTwin } from './build.js';

const dir = mkdtempSync(join(tmpdir(), 'kit-build-untrusted-'));
// Short budgets, so a twin that loops or allocates at load is ended quickly.
const lane = new SandboxLane({ name: 'build-untrusted test', limits: { callMs: 400, memoryBytes: 32 * 1024 * 1024 } });
afterAll(async () => {
  await lane.close();
  rmSync(dir, { recursive: true, force: true });
});

const manifest = `vendor: 'acme', version: '1', protocol: 'http', models: { hosts: ['api.acme.test'], resources: ['thing'] }`;
const route = (name: string, method: string, path: string): string => `{ name: '${name}', match: { method: '${method}', path: '${path}' }, handle: () => ({ body: '${name}' }) }`;

/** Writes `twin/index.ts` of a project folder of its own, importing the SDK as a user's twin does. */
function project(name: string, body: string): string {
  const file = join(dir, name, 'twin', 'index.ts');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `import { defineTwin } from 'twinkit/twin';\n${body}\n`);
  return file;
}

async function refusal(file: string, options: Parameters<typeof buildTwin>[1] = {}): Promise<KitError> {
  try {
    await buildTwin(file, { trusted: false, lane, ...options });
  } catch (e) {
    expect(e).toBeInstanceOf(KitError);
    expect((e as KitError).code).toBe('invalid_twin');
    return e as KitError;
  }
  throw new Error('the build succeeded');
}

describe('buildTwin for a twin from a user\'s sources', () => {
  it('builds the template kit twin new copies, importing the SDK as twinkit/twin, its manifest read in the sandbox', async () => {
    cpSync(fileURLToPath(new URL('./template/', import.meta.url)), join(dir, 'template'), { recursive: true });
    const built = await buildTwin(join(dir, 'template', 'twin', 'index.ts'), { trusted: false });
    expect(built.trusted).toBe(false);
    expect(built.manifest.vendor).toBe('kitvendor');
    expect(built.manifest.routes.map((r) => r.name)).toEqual(['widgets.create', 'widgets.list', 'widgets.retrieve', 'widgets.update', 'widgets.delete']);
    expect([built.manifest.stores, built.manifest.moves]).toEqual([['widgets'], ['activate']]);
  });

  it('refuses a build error with the file, line and column', async () => {
    const file = project('broken', `export default defineTwin({ ${manifest}, routes: [ });`);
    const e = await refusal(file);
    expect(e.message).toMatch(/twin\/index\.ts:2:\d+: /);
    expect(e.details).toMatchObject({ field: 'source', line: 2, column: expect.any(Number), file: expect.stringContaining('index.ts') });
  });

  it('refuses an entry that exports nothing, saying what it must export', async () => {
    const e = await refusal(project('nothing', 'export const unused = 1;'));
    expect(e.message).toContain('nothing/twin/index.ts');
    expect(e.message).toContain('export default defineTwin');
  });

  it('ends a twin that loops at load, within its budget', async () => {
    const started = Date.now();
    const e = await refusal(project('loops', `for (;;) {}\nexport default defineTwin({ ${manifest}, routes: [] });`));
    expect(e.message).toContain('loops/twin/index.ts');
    expect(e.message).toMatch(/failed to load \((timeout|guest_error)\)/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('ends a twin that allocates without bound at load, within its memory', async () => {
    const e = await refusal(project('allocates', `const kept: number[][] = [];\nfor (;;) kept.push(new Array(100000).fill(1));\nexport default defineTwin({ ${manifest}, routes: [] });`));
    expect(e.message).toContain('allocates/twin/index.ts');
    expect(e.message).toMatch(/failed to load \((out_of_memory|timeout)\)/);
  });

  it('refuses two routes that match the same method and path, naming both', async () => {
    const e = await refusal(project('clash', `export default defineTwin({ ${manifest}, routes: [${route('things.get', 'GET', '/v1/things/:id')}, ${route('things.fetch', 'GET', '/v1/things/:key')}] });`));
    expect(e.details).toMatchObject({ field: 'routes[1]' });
    expect(e.message).toContain("'things.fetch'");
    expect(e.message).toContain("'things.get'");
  });

  it('refuses a vendor id already served beside it', async () => {
    const e = await refusal(project('claims', `export default defineTwin({ ${manifest}, routes: [] });`), { served: ['stripe', 'acme'] });
    expect(e.details).toMatchObject({ field: 'vendor' });
    expect(e.message).toContain("'acme' is already served");
  });

  it('refuses a vendor id that is not one, naming the field', async () => {
    const e = await refusal(project('badid', `export default defineTwin({ ${manifest.replace("'acme'", "'Acme Inc'")}, routes: [] });`));
    expect(e.message).toContain('vendor');
    expect(e.message).toContain('badid/twin/index.ts');
  });

  it('refuses twinkit/twin/testing (Node-side, for tests) and other twinkit names in twin code', async () => {
    const e = await refusal(project('testing', `import { world } from 'twinkit/twin/testing';\nworld;\nexport default defineTwin({ ${manifest}, routes: [] });`));
    expect(e.message).toContain("'twinkit/twin/testing' is not part of the twin SDK here");
  });

  it('keeps the built-in path: a trusted build reads the same manifest', async () => {
    const file = project('same', `export default defineTwin({ ${manifest}, routes: [${route('things.get', 'GET', '/v1/things/:id')}] });`);
    const trusted = await buildTwin(file);
    const untrusted = await buildTwin(file, { trusted: false, lane });
    expect(untrusted.manifest).toEqual(trusted.manifest);
    expect(untrusted.source).toBe(trusted.source);
  });
});
