/**
 * `kit world serve` with a world file (docs/world-file.md), in-process with the real runner and
 * server: a scenario colocated in the app's folder (written by PUT, removed by DELETE, an edit
 * in force on the next request, a broken edit reported with its line and the old scenario kept),
 * checks by path, a twin built from the app's sources and reached through its vendor URL, and
 * `--dev`: an edit rebuilt and served, a build error printed and shown in the twin's status
 * while the last good build serves. Bad world files stop the command with the file and line.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalWorld } from '../../runtime/runner/open.js';
import type { TwinBundle } from '../../runtime/runner/types.js';
import { buildGuestRuntime, loadBuiltinTwins } from '../twin/build.js';
import { main } from './main.js';
import type { CliDeps } from './main.js';
import { serveWorld, type ServeDeps, type ServingWorld } from './serve.js';

const SDK = fileURLToPath(new URL('../twin/index.ts', import.meta.url));
let root: string;

async function helloOnly(): Promise<Map<string, TwinBundle>> {
  const all = await loadBuiltinTwins();
  return new Map([['hello', all.get('hello')!]]);
}

const deps: ServeDeps = {
  loadTwins: helloOnly,
  openWorld: async (o) => openLocalWorld({ ...o, guestRuntime: await buildGuestRuntime() }),
};

/** The acme twin's entry: GET /v1/ping answers `word`. */
function acmeSource(word: string, vendor = 'acme'): string {
  return `import { defineTwin } from ${JSON.stringify(SDK)};
import { pong } from './pong.js';
export default defineTwin({
  vendor: ${JSON.stringify(vendor)},
  version: '0.1.0',
  protocol: 'http',
  models: { hosts: ['api.acme.test'], resources: ['ping'] },
  routes: [{ name: 'ping', match: { method: 'GET', path: '/v1/ping' }, handle: () => ({ status: 200, body: pong(${JSON.stringify(word)}) }) }],
});
`;
}

/** An app folder: a world file, the acme twin's sources, a check. */
function makeApp(name: string, worldFile: string): string {
  const app = join(root, name);
  mkdirSync(join(app, 'twins', 'acme', 'twin'), { recursive: true });
  writeFileSync(join(app, 'twins', 'acme', 'twin', 'index.ts'), acmeSource('one'));
  writeFileSync(join(app, 'twins', 'acme', 'twin', 'pong.ts'), 'export function pong(word: string) { return { word }; }\n');
  mkdirSync(join(app, 'kit', 'checks'), { recursive: true });
  writeFileSync(join(app, 'kit', 'checks', 'small.js'), checkSource(1000));
  writeFileSync(join(app, 'kit.world.yaml'), worldFile);
  return app;
}

function checkSource(limit: number): string {
  return `export const check = { name: 'small', run(entry) { return entry.writes.length <= ${limit} ? { pass: true } : { pass: false, failures: ['too many'] }; } };\n`;
}

const WORLD_FILE = `world: shop
twins:
  hello:
    scenario: kit/scenarios/hello.yaml
    checks: [kit/checks/small.js]
  acme:
    path: twins/acme
`;

function scenario(status: number): string {
  return `handlers:\n  - name: down\n    match: GET /v1/greetings\n    respond:\n      status: ${status}\n`;
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'kit-local-world-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Served {
  serving: ServingWorld;
  reported: string[];
  vendor(path: string): Promise<Response>;
  api(method: string, path: string, body?: string, type?: string): Promise<Response>;
}

async function serve(app: string, dev = false): Promise<Served> {
  const reported: string[] = [];
  const serving = await serveWorld({ dir: app, port: 0, proxyPort: 0, host: '127.0.0.1', org: 'local', dev, report: (l) => reported.push(l) }, deps);
  const headers = { 'x-kit-token': serving.tokens.token };
  return {
    serving,
    reported,
    vendor: (path) => fetch(`${serving.server.worldUrl}${path}`, { headers }),
    api: (method, path, body, type) => fetch(`${serving.server.worldApi}${path}`, { method, headers: { ...headers, ...(type ? { 'content-type': type } : {}) }, ...(body !== undefined ? { body } : {}) }),
  };
}

describe('a world file served', () => {
  let app: string;
  let w: Served;
  beforeAll(async () => {
    app = makeApp('shop', WORLD_FILE);
    w = await serve(app);
  }, 60_000);
  afterAll(() => w?.serving.server.close());

  it('serves the twins it names, the app’s own through its vendor URL', async () => {
    expect(w.serving.twins).toEqual(['hello', 'acme']);
    expect(w.serving.world).toBe('shop');
    expect(await (await w.vendor('/acme/v1/ping')).json()).toEqual({ word: 'one' });
    const status = await (await w.api('GET', '/twins/acme/status')).json();
    expect(status.source).toMatchObject({ kind: 'path', path: 'twins/acme', build: { ok: true } });
    expect((await (await w.api('GET', '/twins/hello/status')).json()).source).toEqual({ kind: 'builtin' });
  });

  const file = (): string => join(app, 'kit', 'scenarios', 'hello.yaml');

  it('writes a PUT scenario to the file the world file declares, and DELETE removes it', async () => {
    expect(existsSync(file())).toBe(false);
    expect((await w.api('PUT', '/twins/hello/scenario', scenario(503), 'application/yaml')).status).toBe(200);
    expect(readFileSync(file(), 'utf8')).toBe(scenario(503));
    expect((await w.vendor('/hello/v1/greetings')).status).toBe(503);
    expect((await w.api('DELETE', '/twins/hello/scenario')).status).toBe(204);
    expect(existsSync(file())).toBe(false);
    expect((await w.vendor('/hello/v1/greetings')).status).toBe(200);
  });

  it('puts an edit of the file in force on the next request', async () => {
    expect((await w.api('PUT', '/twins/hello/scenario', scenario(503), 'application/yaml')).status).toBe(200);
    writeFileSync(file(), scenario(418));
    expect((await w.vendor('/hello/v1/greetings')).status).toBe(418);
    const report = await (await w.vendor('/hello/twin/scenario')).json();
    expect(report.file).toEqual({ path: join('kit', 'scenarios', 'hello.yaml'), problem: null });
  });

  it('reads an edit as soon as it is saved, before any request (a watcher on the folder the PUT made)', async () => {
    expect((await w.api('PUT', '/twins/hello/scenario', scenario(503), 'application/yaml')).status).toBe(200);
    const before = w.reported.length;
    writeFileSync(file(), scenario(409));
    await expect.poll(() => w.reported.slice(before).some((l) => l === 'kit: kit/scenarios/hello.yaml read again: 1 handler in force on hello'), { timeout: 5_000 }).toBe(true);
    expect((await w.vendor('/hello/v1/greetings')).status).toBe(409);
  });

  it('reports a broken edit with its path and line, and keeps the scenario in force', async () => {
    writeFileSync(file(), scenario(418));
    expect((await w.vendor('/hello/v1/greetings')).status).toBe(418);
    writeFileSync(file(), `${scenario(999)}`);
    expect((await w.vendor('/hello/v1/greetings')).status).toBe(418);
    const status = await (await w.api('GET', '/twins/hello/status')).json();
    expect(status.scenarioFile).toEqual({ path: join('kit', 'scenarios', 'hello.yaml'), problem: { line: 5, message: expect.stringMatching(/handlers\[0\]\.respond\.status: must be an integer 100-599/) } });
    expect(w.reported).toContainEqual(expect.stringMatching(/^kit: kit\/scenarios\/hello\.yaml:5: handlers\[0\]\.respond\.status: .*\(the scenario in force is kept\)$/));
    // Fixed: in force again, and the problem is gone.
    writeFileSync(file(), scenario(429));
    expect((await w.vendor('/hello/v1/greetings')).status).toBe(429);
    expect((await (await w.api('GET', '/twins/hello/status')).json()).scenarioFile.problem).toBeNull();
  });

  it('puts a check file in force at start and again when it is edited; a bad edit keeps the check in force', async () => {
    const check = join(app, 'kit', 'checks', 'small.js');
    expect((await (await w.api('GET', '/checks')).json()).checks.map((c: { name: string }) => c.name)).toEqual(['small']);
    writeFileSync(check, checkSource(5));
    expect(await (await w.api('GET', '/checks/small')).text()).toBe(checkSource(5));
    writeFileSync(check, 'export const check = {\n  name: "small",\n  run(entry) { return await 1; }\n};\n');
    expect(await (await w.api('GET', '/checks/small')).text()).toBe(checkSource(5));
    expect(w.reported).toContainEqual(expect.stringMatching(/^kit: kit\/checks\/small\.js:3: .*\(the check in force is kept\)$/));
  });
});

describe('kit world serve --dev', () => {
  let app: string;
  let w: Served;
  beforeAll(async () => {
    app = makeApp('dev', WORLD_FILE);
    w = await serve(app, true);
  }, 60_000);
  afterAll(() => w?.serving.server.close());

  const word = async (): Promise<unknown> => ((await (await w.vendor('/acme/v1/ping')).json()) as { word: unknown }).word;

  it('rebuilds a twin on an edit of its sources, and the next request uses the new build', async () => {
    expect(await word()).toBe('one');
    writeFileSync(join(app, 'twins', 'acme', 'twin', 'pong.ts'), 'export function pong(word: string) { return { word: word + "!" }; }\n');
    await expect.poll(word, { timeout: 10_000, interval: 20 }).toBe('one!');
    expect(w.reported).toContainEqual(expect.stringMatching(/^kit: twin acme rebuilt in \d+ ms/));
  });

  it('prints a build error with its file, line and column, shows it in the twin status, and keeps the last good build serving', async () => {
    writeFileSync(join(app, 'twins', 'acme', 'twin', 'index.ts'), acmeSource('two').replace("protocol: 'http',", "protocol: 'http',,"));
    await expect.poll(() => w.reported.find((l) => l.includes('does not build')), { timeout: 10_000, interval: 20 }).toBeDefined();
    expect(w.reported.find((l) => l.includes('does not build'))).toMatch(/^kit: twin acme does not build: twins\/acme\/twin\/index\.ts:6:20: Expected identifier but found "," \(the last good build keeps serving\)$/);
    const status = await (await w.api('GET', '/twins/acme/status')).json();
    expect(status.source.build).toMatchObject({ ok: false, error: { file: join('twins', 'acme', 'twin', 'index.ts'), line: 6, column: 20 } });
    expect(await word()).toBe('one!');
    writeFileSync(join(app, 'twins', 'acme', 'twin', 'index.ts'), acmeSource('two'));
    await expect.poll(word, { timeout: 10_000, interval: 20 }).toBe('two!');
    expect((await (await w.api('GET', '/twins/acme/status')).json()).source.build.ok).toBe(true);
  });

  it('keeps serving when an edit makes the twin claim another vendor id', async () => {
    writeFileSync(join(app, 'twins', 'acme', 'twin', 'index.ts'), acmeSource('three', 'acme-two'));
    await expect.poll(() => w.reported.find((l) => l.includes('"acme-two"')), { timeout: 10_000, interval: 20 }).toBeDefined();
    expect(await word()).toBe('two!');
  });
});

describe('a world file refused at start', () => {
  const cliDeps: CliDeps = { ...deps, version: 'test', untilStopped: () => new Promise(() => {}) };

  async function run(name: string, worldFile: string, extra: string[] = []): Promise<{ code: number; err: string[] }> {
    const app = makeApp(name, worldFile);
    const err: string[] = [];
    const code = await main(['world', 'serve', app, '--port', '0', '--proxy-port', '0', ...extra], { out: () => {}, err: (l) => err.push(l) }, cliDeps);
    return { code, err: err.map((l) => l.replaceAll(app, '<app>')) };
  }

  it('exits non-zero naming the file, line and field', async () => {
    const cases: [string, string, RegExp][] = [
      ['unknown-key', 'twins:\n  hello:\n    senario: a.yaml\n', /^kit: <app>\/kit\.world\.yaml:3: twins\.hello\.senario: unknown key/],
      ['no-builtin', 'twins:\n  hallo:\n', /^kit: <app>\/kit\.world\.yaml:2: twins\.hallo: no built-in twin "hallo" \(the built-in twins are: hello\)/],
      ['wrong-vendor', 'twins:\n  widgets:\n    path: twins/acme\n', /^kit: <app>\/kit\.world\.yaml:2: twins\.widgets: the twin at "twins\/acme" is vendor "acme"/],
      ['outside', 'twins:\n  acme:\n    path: ../shop/twins/acme\n', /^kit: <app>\/kit\.world\.yaml:3: twins\.acme\.path: "\.\.\/shop\/twins\/acme" is outside/],
    ];
    for (const [name, text, message] of cases) {
      const r = await run(name, text);
      expect(r.code, name).toBe(1);
      expect(r.err[0], name).toMatch(message);
    }
  });

  it('exits non-zero when a twin does not build, with esbuild’s file and line', async () => {
    const app = makeApp('broken', 'twins:\n  acme:\n    path: twins/acme\n');
    writeFileSync(join(app, 'twins', 'acme', 'twin', 'pong.ts'), 'export function pong(word: string) { return { word }\n');
    const err: string[] = [];
    const code = await main(['world', 'serve', app, '--port', '0', '--proxy-port', '0'], { out: () => {}, err: (l) => err.push(l) }, cliDeps);
    expect(code).toBe(1);
    expect(err[0]).toMatch(/kit\.world\.yaml:3: twins\.acme\.path: the twin does not build: twins\/acme\/twin\/pong\.ts:2:1: Unexpected end of file$/);
  });

  it('refuses --twins beside a world file', async () => {
    const r = await run('twins-flag', WORLD_FILE, ['--twins', 'hello']);
    expect(r.code).toBe(2);
    expect(r.err[0]).toMatch(/^kit: --twins does not apply to a world file: <app>\/kit\.world\.yaml names the world's twins/);
  });
});

describe('a component twin named by the world file', () => {
  let w: Served;
  beforeAll(async () => {
    // The notes component (test/components/), built from its sources here and written where the app keeps it.
    const { componentBytes } = await import('../../test/components/build.js');
    const app = join(root, 'components');
    mkdirSync(join(app, 'twins'), { recursive: true });
    writeFileSync(join(app, 'twins', 'notes.wasm'), await componentBytes('notes'));
    writeFileSync(join(app, 'kit.world.yaml'), 'world: notes\ntwins:\n  hello: {}\n  notes:\n    component: twins/notes.wasm\n');
    w = await serve(app);
  }, 120_000);
  afterAll(() => w?.serving.server.close());

  it('serves it beside the JavaScript twins, through its vendor URL, its status naming the file', async () => {
    expect(w.serving.twins).toEqual(['hello', 'notes']);
    const made = await fetch(`${w.serving.server.worldUrl}/notes/v1/notes`, { method: 'POST', headers: { 'x-kit-token': w.serving.tokens.token, 'content-type': 'application/json' }, body: JSON.stringify({ title: 'From the world file' }) });
    expect(made.status).toBe(201);
    const note = (await made.json()) as { id: string; title: string };
    expect(await (await w.vendor(`/notes/v1/notes/${note.id}`)).json()).toMatchObject({ id: note.id, title: 'From the world file' });
    expect((await (await w.api('GET', '/twins/notes/status')).json()).source).toEqual({ kind: 'component', path: 'twins/notes.wasm' });
  });
});
