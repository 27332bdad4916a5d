/**
 * Bundles of a twin a user would install: a copy of twins/hello under another vendor id (and
 * version), written to a temporary folder and built with `buildTwin`, as `kit twin build` builds a
 * user's twin; and scripts that are not twins, hand-written, for the refusals.
 */
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildTwin } from '../../sdk/twin/build.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * A twin folder like hello's with `vendor` and `version` (its SDK imports made absolute), and one
 * route more, `GET /v1/engine`, that says whether its engine has a `WebAssembly` global.
 */
export async function helloCopy(vendor: string, version = '1.0.0'): Promise<{ dir: string; entry: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `kit-twin-${vendor}-`));
  await cp(join(repo, 'twins', 'hello', 'twin'), join(dir, 'twin'), { recursive: true });
  const sdk = join(repo, 'sdk', 'twin');
  const rewrite = async (folder: string): Promise<void> => {
    for (const item of await readdir(folder, { withFileTypes: true })) {
      const path = join(folder, item.name);
      if (item.isDirectory()) await rewrite(path);
      else if (item.name.endsWith('.ts')) {
        let text = await readFile(path, 'utf8');
        text = text.replace(/(['"])(?:\.\.\/)+sdk\/twin\/([^'"]+)\1/g, (_m, q: string, rest: string) => `${q}${join(sdk, rest)}${q}`);
        if (item.name === 'index.ts' && folder === join(dir, 'twin')) {
          text = text.replace(/vendor: 'hello'/, `vendor: '${vendor}'`).replace(/version: '[^']*'/, `version: '${version}'`);
          text = text.replace(/endpointEnv: \[[^\]]*\]/, `endpointEnv: ['${vendor.toUpperCase().replace(/-/g, '_')}_API_URL']`);
          // Which engine runs it: QuickJS has no WebAssembly global; a V8 realm (a trusted twin) has one.
          text = text.replace(/routes: \[/, "routes: [\n    { name: 'engine.probe', match: { method: 'GET', path: '/v1/engine' }, handle: () => ({ status: 200, body: { webAssembly: typeof (globalThis as { WebAssembly?: unknown }).WebAssembly } }) },");
        }
        await writeFile(path, text);
      }
    }
  };
  await rewrite(join(dir, 'twin'));
  return { dir, entry: join(dir, 'twin', 'index.ts'), remove: () => rm(dir, { recursive: true, force: true }) };
}

/** The bundle of hello's copy under `vendor`. */
export async function helloBundle(vendor: string, version = '1.0.0'): Promise<string> {
  const copy = await helloCopy(vendor, version);
  try {
    return (await buildTwin(copy.entry)).source;
  } finally {
    await copy.remove();
  }
}

/** A script that defines a twin by hand whose two routes clash (the second is never reached). */
export function clashingRoutesBundle(vendor: string): string {
  const manifest = {
    vendor,
    version: '1.0.0',
    protocol: 'http',
    models: { hosts: [`api.${vendor}.test`], resources: ['thing'] },
    requestScopes: [],
    routes: [
      { name: 'things.list', match: { method: 'GET', path: '/v1/things' } },
      { name: 'things.all', match: { method: 'GET', path: '/v1/things' } },
    ],
    stores: [],
    moves: [],
    scenarios: false,
  };
  return `globalThis.__kit_manifest = () => ${JSON.stringify(JSON.stringify(manifest))};\nglobalThis.__kit_invoke = () => '{}';\n`;
}
