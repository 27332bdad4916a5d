/**
 * What attaching costs, as ratios against the same requests sent straight to the world in
 * the same run (never bare numbers: the machine is shared). Not a test; run it by hand:
 *
 *   npx esbuild test/attach/measure.ts --bundle --platform=node --format=esm \
 *     --packages=external --outfile=test/attach/.build-measure/measure.mjs && \
 *   node test/attach/.build-measure/measure.mjs; rm -rf test/attach/.build-measure
 *
 * 1. curl, N GETs of /v1/customers on one kept-alive connection: straight to the world over
 *    plain HTTP, against https://api.stripe.com through the proxy (TLS terminated there).
 * 2. Node's fetch, 1000 sequential GETs: straight to the world URL (no entry), against
 *    https://api.stripe.com under the attach entry.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildAttach, serveWorld, TOKENS } from './harness.js';

const run = promisify(execFile);
const ROUNDS = 3;

async function timed(command: string, args: string[], env: NodeJS.ProcessEnv = { PATH: process.env['PATH'] }): Promise<{ ms: number; stdout: string }> {
  const t = performance.now();
  const { stdout } = await run(command, args, { env, maxBuffer: 1 << 28 });
  return { ms: performance.now() - t, stdout };
}

const served = await serveWorld(['stripe']);
const built = await buildAttach();
const dir = await mkdtemp(join(tmpdir(), 'kit-measure-'));
try {
  const manifest = (await (await fetch(`${served.server.worldUrl}/.well-known/kit-world`, { headers: { 'x-kit-token': TOKENS.token } })).json()) as {
    ca: { pem: string };
    proxy: { url: string };
  };
  const caFile = join(dir, 'ca.pem');
  await writeFile(caFile, manifest.ca.pem);

  const N = 400;
  const direct = Array.from({ length: N }, () => `${served.server.worldUrl}/stripe/v1/customers`);
  const proxied = Array.from({ length: N }, () => 'https://api.stripe.com/v1/customers');
  for (let round = 0; round < ROUNDS; round++) {
    const a = await timed('curl', ['-sS', '-u', 'sk_test_m:', '-H', `x-kit-token: ${TOKENS.token}`, ...direct]);
    const b = await timed('curl', ['-sS', '--proxy', manifest.proxy.url, '--proxy-user', `kit:${TOKENS.token}`, '--cacert', caFile, '-u', 'sk_test_m:', ...proxied]);
    console.log(`curl, ${N} GETs on one connection: direct ${a.ms.toFixed(0)} ms, through the proxy ${b.ms.toFixed(0)} ms, ratio ${(b.ms / a.ms).toFixed(2)}`);
  }

  // Timed inside the app, after a warm-up, so process start and the manifest fetch are left out.
  const app = (url: string, headers: Record<string, string>): string =>
    `const h = ${JSON.stringify(headers)}; const get = async () => (await fetch(${JSON.stringify(url)}, { headers: h })).text();` +
    ' for (let i = 0; i < 50; i++) await get(); const t = performance.now(); for (let i = 0; i < 1000; i++) await get(); console.log(performance.now() - t);';
  for (let round = 0; round < ROUNDS; round++) {
    const a = await timed(process.execPath, ['--input-type=module', '-e', app(`${served.server.worldUrl}/stripe/v1/customers`, { 'x-kit-token': TOKENS.token, authorization: 'Bearer sk_test_m' })]);
    const b = await timed(process.execPath, ['--import', built.entry, '--input-type=module', '-e', app('https://api.stripe.com/v1/customers', { authorization: 'Bearer sk_test_m' })], {
      ...process.env,
      KIT_WORLD: served.server.worldUrl,
      KIT_WORLD_TOKEN: TOKENS.token,
    });
    const x = Number(a.stdout);
    const y = Number(b.stdout);
    console.log(`fetch, 1000 GETs: direct ${x.toFixed(0)} ms, api.stripe.com through the entry ${y.toFixed(0)} ms, ratio ${(y / x).toFixed(2)}`);
  }
} finally {
  await rm(dir, { recursive: true, force: true });
  await built.close();
  await served.close();
}
