// Turns run.sh's results.tsv into the machine-readable summary that bench/run.ts merges into
// bench/results/latest.json: per row (by its short name), the medians over the rounds of
// requests/s, of its per-round ratio to the uWS hello world and to the node:http hello world
// (each measured in the same round), of server CPU µs per request, and of p50/p99 latency.
//
//   node bench/http/summary.mjs bench/http/.out/results.tsv out.json ['{"connections":50,...}']
import { readFileSync, writeFileSync } from 'node:fs';

const [tsv, out, settings] = process.argv.slice(2);
if (tsv === undefined || out === undefined) {
  console.error('usage: summary.mjs <results.tsv> <out.json> [settings JSON]');
  process.exit(2);
}
const toMs = (s) => (s.endsWith('us') ? Number(s.slice(0, -2)) / 1000 : s.endsWith('ms') ? Number(s.slice(0, -2)) : Number(s.slice(0, -1)) * 1000);
const median = (xs) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const round = (x, digits) => (x === null || !Number.isFinite(x) ? null : Number(x.toFixed(digits)));

const rounds = new Map(); // round -> Map(id -> figures)
const rows = []; // [id, name] in first-seen order
const loads = [];
for (const line of readFileSync(tsv, 'utf8').trim().split('\n')) {
  const [r, name, rps, p50, p99, cpu, load, idField, non2xx] = line.split('\t');
  // Older results.tsv files have no short name: the long one stands in.
  const id = idField || name;
  if (load !== undefined) loads.push(Number(load));
  if (!rounds.has(r)) rounds.set(r, new Map());
  rounds.get(r).set(id, { rps: Number(rps), p50: toMs(p50), p99: toMs(p99), cpu: Number(cpu), non2xx: Number(non2xx || 0) });
  if (!rows.some(([i]) => i === id)) rows.push([id, name]);
}

const ratios = (id, base) => [...rounds.values()].filter((r) => r.has(id) && r.has(base)).map((r) => r.get(id).rps / r.get(base).rps);
const summary = rows.map(([id, name]) => {
  const runs = [...rounds.values()].filter((r) => r.has(id)).map((r) => r.get(id));
  const toUws = ratios(id, 'uws');
  const cpuToUws = [...rounds.values()].filter((r) => r.has(id) && r.has('uws')).map((r) => r.get(id).cpu / r.get('uws').cpu);
  return {
    id,
    name,
    rounds: runs.length,
    rps: round(median(runs.map((r) => r.rps)), 0),
    bestRps: round(Math.max(...runs.map((r) => r.rps)), 0),
    ratioToUws: round(median(toUws), 4),
    ratioToUwsRange: toUws.length > 0 ? [round(Math.min(...toUws), 4), round(Math.max(...toUws), 4)] : null,
    ratioToNodeHttp: round(median(ratios(id, 'node-http')), 4),
    cpuUsPerRequest: round(median(runs.map((r) => r.cpu)), 2),
    cpuRatioToUws: round(median(cpuToUws), 3),
    p50Ms: round(median(runs.map((r) => r.p50)), 3),
    p99Ms: round(median(runs.map((r) => r.p99)), 3),
    non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
  };
});
const result = {
  settings: settings ? JSON.parse(settings) : {},
  loadAverage: loads.length > 0 ? { min: Math.min(...loads), max: Math.max(...loads), median: median(loads) } : null,
  rows: summary,
};
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
