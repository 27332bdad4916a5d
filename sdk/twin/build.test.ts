import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseGuestOutput } from './protocol.js';
import { afterAll, describe, expect, it } from 'vitest';
import { KitError } from '../../runtime/errors.js';
import vm from 'node:vm';
import { buildGuestRuntime, buildTwin, loadBuiltinTwins } from './build.js';

const SDK = fileURLToPath(new URL('./index.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'kit-build-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ok = `export default defineTwin({ vendor: 'tmp', version: '1', protocol: 'http', models: { hosts: [], resources: [] }, routes: [] });`;

function entry(name: string, body: string): string {
  const file = join(dir, name);
  writeFileSync(file, `import { defineTwin } from ${JSON.stringify(SDK)};\n${body}\n`);
  return file;
}

async function refusal(file: string): Promise<KitError> {
  try {
    await buildTwin(file);
  } catch (e) {
    expect(e).toBeInstanceOf(KitError);
    expect((e as KitError).code).toBe('invalid_twin');
    return e as KitError;
  }
  throw new Error('the build succeeded');
}

describe('buildTwin', () => {
  it('bundles a twin into one script that defines the guest globals, and reads its manifest', async () => {
    const built = await buildTwin(entry('ok.ts', ok));
    expect(built.vendor).toBe('tmp');
    expect(built.manifest).toEqual({ vendor: 'tmp', version: '1', protocol: 'http', models: { hosts: [], resources: [] }, requestScopes: [], routes: [], stores: [], moves: [], scenarios: true });
    expect(built.source).toMatch(/__kit_invoke/);
    expect(built.source).not.toMatch(/\brequire\(|\bimport\s*\(/);
  });

  it('refuses an import of a Node module, naming it', async () => {
    const e = await refusal(entry('node.ts', `import { readFileSync } from 'node:fs';\nreadFileSync;\n${ok}`));
    expect(e.message).toContain("cannot import the Node module 'node:fs'");
    const bare = await refusal(entry('bare.ts', `import * as path from 'path';\npath;\n${ok}`));
    expect(bare.message).toContain("'path'");
  });

  it('refuses a syntax error with its place', async () => {
    const e = await refusal(entry('syntax.ts', `${ok}\nconst = ;`));
    expect(e.message).toMatch(/syntax\.ts:\d+:\d+/);
  });

  it('refuses an entry with no default export, or a definition defineTwin refuses', async () => {
    expect((await refusal(entry('nodefault.ts', 'export const x = defineTwin;'))).message).toMatch(/no default export/);
    expect((await refusal(entry('badvendor.ts', ok.replace("'tmp'", "'BAD'")))).message).toMatch(/defineTwin: vendor/);
    expect((await refusal(join(dir, 'missing.ts'))).message).toMatch(/does not exist/);
  });

  it('refuses an endpoint variable no world may set for an app, naming it, and takes endpoint names', async () => {
    const withEnv = (names: string[]) => ok.replace('resources: [] }', `resources: [], endpointEnv: ${JSON.stringify(names)} }`);
    const e = await refusal(entry('env.ts', withEnv(['TMP_API_URL', 'NODE_OPTIONS', 'TMP_SECRET'])));
    expect(e.message).toContain('NODE_OPTIONS, TMP_SECRET');
    expect(e.message).not.toContain('TMP_API_URL,');
    expect((await buildTwin(entry('env-ok.ts', withEnv(['TMP_API_URL', 'TMP_HOST'])))).manifest.models.endpointEnv).toEqual(['TMP_API_URL', 'TMP_HOST']);
  });
});

describe('loadBuiltinTwins', () => {
  it('builds every built-in twin once, by vendor', async () => {
    const first = await loadBuiltinTwins();
    expect([...first.keys()]).toContain('hello');
    expect(first.get('hello')?.manifest.routes.map((r) => r.name)).toContain('greetings.search');
    expect(await loadBuiltinTwins()).toBe(first);
  });
});

describe('buildGuestRuntime', () => {
  it('defines __kit_install_twin, which installs a definition made at run time', async () => {
    const runtime = await buildGuestRuntime();
    const context = vm.createContext({ __host_call: () => 'null' });
    vm.runInContext(`${runtime}\n;__kit_install_twin({ vendor: 'hello', version: 'scenario', protocol: 'http', models: { hosts: [], resources: [] }, routes: [{ name: 's:0', match: { path: '/' }, handle: (req, ctx) => ({ status: 202, body: { id: ctx.id('x_'), now: Date.now() } }) }] });`, context);
    const manifest = JSON.parse(vm.runInContext('__kit_manifest()', context) as string) as { vendor: string; routes: unknown[] };
    expect(manifest.vendor).toBe('hello');
    const out = parseGuestOutput(vm.runInContext(`__kit_invoke(JSON.stringify({ kind: 'route', index: 0, request: {}, world: 'w', twin: 'hello', position: 1, nowMs: 7 }))`, context)) as { response: { status: number; body: { now: number } } };
    expect(out.response.status).toBe(202);
    expect(out.response.body.now).toBe(7);
    expect(await buildGuestRuntime()).toBe(runtime);
  });

  it("installs a scenario's handlers, whose tree may write the scenarios' scenario.* types", async () => {
    const runtime = await buildGuestRuntime();
    const context = vm.createContext({ __host_call: () => 'null' });
    vm.runInContext(`${runtime}\n;__kit_install_twin({ vendor: 'hello', version: 'scenario', protocol: 'http', models: { hosts: [], resources: [] }, routes: [{ name: 's:0', match: { path: '/' }, handle: (req, ctx) => { ctx.tree.put('scenario.calls', 'n', { n: 1 }); return { status: 200 }; } }] });`, context);
    const out = parseGuestOutput(vm.runInContext(`__kit_invoke(JSON.stringify({ kind: 'route', index: 0, request: {}, world: 'w', twin: 'hello', position: 1, nowMs: 7 }))`, context)) as { writes: unknown[]; thrown?: unknown };
    expect(out.thrown).toBeUndefined();
    expect(out.writes).toEqual([{ type: 'scenario.calls', id: 'n', value: { n: 1 } }]);
  });

  it('refuses a bad definition while the script loads', async () => {
    const runtime = await buildGuestRuntime();
    const context = vm.createContext({});
    expect(() => vm.runInContext(`${runtime}\n;__kit_install_twin({ vendor: 'X', routes: [] });`, context)).toThrow(/defineTwin: vendor/);
  });
});
