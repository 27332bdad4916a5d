/**
 * The time from an edit of a twin's sources to the first answer of the rebuilt twin (issue 37,
 * "Measure"): `kit world serve --dev` on a world file with one twin of the app's own (`path:`),
 * in this process through the CLI's `serveWorld` as the command does. Each round writes the
 * twin's handler file with a new word, then asks `GET {world_url}/acme/v1/ping` every 2 ms until
 * the answer carries that word; the time from just before the write to that answer is the
 * round's figure. Also noted: the rebuild time the CLI prints (esbuild, the manifest check and
 * the swap), and a request to the twin while nothing changes, as a baseline of the same run.
 *
 * `node dist/bench/dev-rebuild.js` (after `npx tsc -p tsconfig.json`); ROUNDS (default 20).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openLocalWorld } from '../runtime/runner/open.js';
import type { TwinBundle } from '../runtime/runner/types.js';
import { serveWorld } from '../sdk/cli/serve.js';
import { buildGuestRuntime, loadBuiltinTwins } from '../sdk/twin/build.js';

const ROUNDS = Number(process.env['ROUNDS'] ?? 20);

/** The SDK's sources, found above this file (it runs from dist/). */
function sdkEntry(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'sdk', 'twin', 'index.ts'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot find sdk/twin/index.ts');
    dir = up;
  }
  return join(dir, 'sdk', 'twin', 'index.ts');
}

function handlerSource(word: string): string {
  return `export function pong() { return { word: ${JSON.stringify(word)} }; }\n`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

async function main(): Promise<void> {
  const app = mkdtempSync(join(tmpdir(), 'kit-dev-bench-'));
  const twin = join(app, 'twins', 'acme', 'twin');
  mkdirSync(twin, { recursive: true });
  writeFileSync(
    join(twin, 'index.ts'),
    `import { defineTwin } from ${JSON.stringify(sdkEntry())};
import { pong } from './pong.js';
export default defineTwin({
  vendor: 'acme', version: '0.1.0', protocol: 'http',
  models: { hosts: ['api.acme.test'], resources: ['ping'] },
  routes: [{ name: 'ping', match: { method: 'GET', path: '/v1/ping' }, handle: () => ({ status: 200, body: pong() }) }],
});
`,
  );
  writeFileSync(join(twin, 'pong.ts'), handlerSource('start'));
  writeFileSync(join(app, 'kit.world.yaml'), 'world: bench\ntwins:\n  acme:\n    path: twins/acme\n');
  const reported: string[] = [];
  const guestRuntime = await buildGuestRuntime();
  const serving = await serveWorld(
    { dir: app, port: 0, proxyPort: 0, host: '127.0.0.1', org: 'local', dev: true, report: (l) => reported.push(l) },
    {
      loadTwins: async () => new Map<string, TwinBundle>([['hello', (await loadBuiltinTwins()).get('hello')!]]),
      openWorld: (o) => openLocalWorld({ ...o, guestRuntime }),
    },
  );
  const url = `${serving.server.worldUrl}/acme/v1/ping`;
  const headers = { 'x-kit-token': serving.tokens.token };
  const ask = async (): Promise<string> => ((await (await fetch(url, { headers })).json()) as { word: string }).word;
  try {
    // Baseline: the same request while nothing changes.
    for (let i = 0; i < 200; i++) await ask();
    const steady: number[] = [];
    for (let i = 0; i < 500; i++) {
      const t = performance.now();
      await ask();
      steady.push(performance.now() - t);
    }
    const edits: number[] = [];
    const builds: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const word = `round-${round}`;
      const before = reported.length;
      const t0 = performance.now();
      writeFileSync(join(twin, 'pong.ts'), handlerSource(word));
      for (;;) {
        if ((await ask()) === word) break;
        if (performance.now() - t0 > 30_000) throw new Error(`round ${round}: no rebuilt answer after 30 s; the CLI said: ${reported.slice(before).join(' | ')}`);
        await new Promise((r) => setTimeout(r, 2));
      }
      edits.push(performance.now() - t0);
      const said = reported.slice(before).map((l) => /rebuilt in (\d+) ms/.exec(l)?.[1]).find((m) => m !== undefined);
      if (said !== undefined) builds.push(Number(said));
      // Let the watcher settle before the next edit.
      await new Promise((r) => setTimeout(r, 100));
    }
    const f = (n: number): string => n.toFixed(1);
    const result = {
      rounds: ROUNDS,
      editToAnswerMs: { median: median(edits), p90: quantile(edits, 0.9), min: Math.min(...edits), max: Math.max(...edits) },
      rebuildMs: builds.length > 0 ? { median: median(builds), min: Math.min(...builds), max: Math.max(...builds) } : null,
      steadyRequestMs: { median: median(steady), p99: quantile(steady, 0.99) },
    };
    console.log(JSON.stringify(result));
    console.log(`edit -> first answer of the rebuilt twin: median ${f(result.editToAnswerMs.median)} ms, p90 ${f(result.editToAnswerMs.p90)} ms (min ${f(result.editToAnswerMs.min)}, max ${f(result.editToAnswerMs.max)}) over ${ROUNDS} edits`);
    if (result.rebuildMs) console.log(`rebuild as the CLI prints it: median ${result.rebuildMs.median} ms (min ${result.rebuildMs.min}, max ${result.rebuildMs.max})`);
    console.log(`a request while nothing changes: median ${result.steadyRequestMs.median.toFixed(2)} ms, p99 ${result.steadyRequestMs.p99.toFixed(2)} ms; edit-to-answer is ${(result.editToAnswerMs.median / result.steadyRequestMs.median).toFixed(0)}x that median`);
  } finally {
    await serving.server.close();
    rmSync(app, { recursive: true, force: true });
  }
}

await main();
