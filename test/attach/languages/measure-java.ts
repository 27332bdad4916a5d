/**
 * What the loopback relay costs a Java app, as ratios against the same requests sent to the
 * world's proxy straight, with the token given by an Authenticator in the app (the change in
 * the app the relay spares; `jdk.http.auth.tunneling.disabledSchemes=` lets Basic through),
 * in the same run. Not a test; run it by hand (needs javac):
 *
 *   npx esbuild test/attach/languages/measure-java.ts --bundle --platform=node --format=esm \
 *     --packages=external --outfile=test/attach/.build-measure/measure-java.mjs && \
 *   node test/attach/.build-measure/measure-java.mjs; rm -rf test/attach/.build-measure
 *
 * Each under `kit world attach` (the trust store is the same); N GETs of /v1/customers timed
 * inside the JVM after 20 of warm-up (test/attach/fixtures/java/RelayMeasure.java):
 * 1. HttpURLConnection, kept-alive (one tunnel for all);
 * 2. HttpURLConnection with `http.keepAlive=false` (a tunnel per request: the relay's worst case).
 * HttpClient has no row: given an Authenticator, JDK 17's HttpClient drops the app's own
 * `Authorization` header, so the comparison app cannot call Stripe at all (401).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildAttach, cleanEnv, REPO, serveWorld, TOKENS } from '../harness.js';

const run = promisify(execFile);
const ROUNDS = 3;
const N = 300;
/** Fewer for a tunnel per request: each is a TCP connection, a CONNECT and a TLS handshake. */
const N_TUNNELS = 100;

const served = await serveWorld(['stripe']);
const built = await buildAttach();
const classes = await mkdtemp(join(tmpdir(), 'kit-measure-java-'));
try {
  await run('javac', ['-d', classes, join(REPO, 'test', 'attach', 'fixtures', 'java', 'RelayMeasure.java')]);
  const proxy = new URL(((await (await fetch(`${served.server.worldUrl}/.well-known/kit-world`, { headers: { 'x-kit-token': TOKENS.token } })).json()) as { proxy: { url: string } }).proxy.url);
  const attached = async (javaArgs: string[]): Promise<number> => {
    const { stdout } = await run(process.execPath, [built.kit, 'world', 'attach', served.server.worldUrl, '--token', TOKENS.token, '--', 'java', ...javaArgs], { env: cleanEnv() });
    return Number(stdout.trim());
  };
  // Command-line -D comes after JAVA_TOOL_OPTIONS, so it wins: the proxy straight, Basic allowed for tunnels.
  const straight = ['-Djdk.http.auth.tunneling.disabledSchemes=', `-Dhttps.proxyHost=${proxy.hostname}`, `-Dhttps.proxyPort=${proxy.port}`];
  const cases: [string, string[]][] = [
    ['HttpURLConnection, kept alive', ['-cp', classes, 'RelayMeasure', 'url', String(N)]],
    ['HttpURLConnection, a tunnel per request', ['-Dhttp.keepAlive=false', '-cp', classes, 'RelayMeasure', 'url', String(N_TUNNELS)]],
  ];
  for (const [name, args] of cases) {
    for (let round = 0; round < ROUNDS; round++) {
      const [flags, rest] = [args.filter((a) => a.startsWith('-D')), args.filter((a) => !a.startsWith('-D'))];
      const relay = await attached([...flags, ...rest]);
      const direct = await attached([...flags, ...straight, ...rest, TOKENS.token]);
      console.log(`${name}, ${args.at(-1)} GETs: the world's proxy with an Authenticator ${direct} ms, through the relay ${relay} ms, ratio ${(relay / direct).toFixed(2)}`);
    }
  }
} finally {
  await rm(classes, { recursive: true, force: true });
  await built.close();
  await served.close();
}
