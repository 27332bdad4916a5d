/**
 * The host's own cost per request, without sockets: the single-world core's two phases
 * (`head` then the body reader) around a trivial WorldHandle, against calling that
 * WorldHandle directly in the same run. The load test (run.sh) is dominated by the
 * machine's other work; this one isolates what the host adds.
 *
 * Run from the repository root:
 *   npx esbuild bench/http/dispatch.ts --bundle --platform=node --format=esm --packages=external \
 *     --outfile=bench/http/.out/dispatch.mjs && node bench/http/.out/dispatch.mjs
 */
import { Bench } from 'tinybench';
import type { WorldRequest } from '../../runtime/runner/types.js';
import { constantWorld } from '../../host/echo-world.js';
import { createSingleWorldCore } from '../../host/single-world.js';
import type { HttpHead } from '../../host/core/types.js';

const TOKEN = 'tok_bench-0123456789abcdefghijklmnopqrstuvwxyzABCDE';

/** Headers as curl-like clients send them, built fresh per request as the adapter does. */
function head(path: string, credential: [string, string] | null): HttpHead {
  const headers = Object.create(null) as Record<string, string>;
  headers['host'] = '127.0.0.1:4440';
  headers['user-agent'] = 'bench/1.0';
  headers['accept'] = '*/*';
  if (credential !== null) headers[credential[0]] = credential[1];
  return { method: 'GET', path, query: '', headers, receivedAt: Date.now() };
}

export async function run(): Promise<string> {
  const world = constantWorld('Hello World!');
  const core = createSingleWorldCore({
    world,
    org: 'local',
    worldName: 'bench',
    tokens: { token: TOKEN, readToken: `${TOKEN}_read` },
    twins: [{ vendor: 'hello', requestScopes: [] }],
    budget: { size: 1e12, windowMs: 1000 },
  });
  const through = async (h: HttpHead, expect: number): Promise<void> => {
    const first = core.handler.head(h);
    const answer = typeof first === 'function' ? await first(undefined) : first;
    if (answer.status !== expect) throw new Error(`expected ${expect}, got ${answer.status}`);
  };
  const direct: WorldRequest = {
    surface: 'vendor', method: 'GET', path: '/hello/v1/things/1', query: '', headers: {}, scope: 'write', requestId: 'r', receivedAt: 0,
  };
  const bench = new Bench({ time: 1500, warmupTime: 300 });
  bench.add('WorldHandle.handle alone (baseline)', async () => {
    await world.handle(direct);
  });
  bench.add('host: GET vendor wire, x-kit-token', () => through(head('/local/bench/hello/v1/things/1', ['x-kit-token', TOKEN]), 200));
  bench.add('host: GET vendor wire, Bearer', () => through(head('/local/bench/hello/v1/things/1', ['authorization', `Bearer ${TOKEN}`]), 200));
  bench.add('host: GET world API, x-kit-token', () => through(head('/-/local/bench/clock', ['x-kit-token', TOKEN]), 200));
  bench.add('host: 401, no credential', () => through(head('/local/bench/hello/v1/things/1', null), 401));
  // The baseline again at the end: the first task of a run can pay for warming up.
  bench.add('WorldHandle.handle alone (again)', async () => {
    await world.handle(direct);
  });
  await bench.run();
  const us = (name: string): number => {
    const res = bench.tasks.find((t) => t.name === name)?.result;
    if (!res || !('latency' in res)) throw new Error(`no result for ${name}`);
    // The median: on a shared machine the mean follows whatever else ran.
    return res.latency.p50 * 1000;
  };
  const base = Math.min(us('WorldHandle.handle alone (baseline)'), us('WorldHandle.handle alone (again)'));
  const lines = ['| task | µs per request (median) | host adds, µs | vs baseline (lower of the two) |', '|---|---:|---:|---:|'];
  for (const t of bench.tasks) {
    const v = us(t.name);
    lines.push(`| ${t.name} | ${v.toFixed(3)} | ${(v - base).toFixed(3)} | ${(v / base).toFixed(2)}× |`);
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  run().then((text) => console.log(text), (e: unknown) => { console.error(e); process.exitCode = 1; });
}
