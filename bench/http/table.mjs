// Turns run.sh's results (round, row, requests/s, p50, p99, server CPU µs/request, load average per line) into the README table:
// per row, the median requests/s, the median of its per-round ratio to that round's
// baseline (the first row), the lowest and highest ratio, the best requests/s over the
// rounds and its ratio to the baseline's best (the least disturbed runs), and the median
// latencies.
import { readFileSync } from 'node:fs';

const lines = readFileSync(process.argv[2], 'utf8').trim().split('\n').map((l) => l.split('\t'));
const toMs = (s) => (s.endsWith('us') ? Number(s.slice(0, -2)) / 1000 : s.endsWith('ms') ? Number(s.slice(0, -2)) : Number(s.slice(0, -1)) * 1000);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const rounds = new Map();
const rows = [];
const loads = [];
for (const [round, name, rps, p50, p99, cpu, load] of lines) {
  if (load !== undefined) loads.push(Number(load));
  if (!rounds.has(round)) rounds.set(round, new Map());
  rounds.get(round).set(name, { rps: Number(rps), p50: toMs(p50), p99: toMs(p99), cpu: Number(cpu) });
  if (!rows.includes(name)) rows.push(name);
}
const base = rows[0];
const out = [];
const best = (name) => Math.max(...[...rounds.values()].filter((r) => r.has(name)).map((r) => r.get(name).rps));
out.push('| server | requests/s (median) | ratio to uWS hello (median of rounds) | ratio range | best requests/s | ratio of bests | server CPU µs/request (median) | CPU ratio to uWS hello | p50 ms | p99 ms |');
out.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const name of rows) {
  const runs = [...rounds.values()].filter((r) => r.has(name) && r.has(base));
  const ratios = runs.map((r) => r.get(name).rps / r.get(base).rps);
  const rps = median(runs.map((r) => r.get(name).rps));
  const cpu = median(runs.map((r) => r.get(name).cpu));
  const cpuRatio = median(runs.map((r) => r.get(name).cpu / r.get(base).cpu));
  out.push(
    `| ${name} | ${Math.round(rps)} | ${median(ratios).toFixed(2)} | ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)} | ${Math.round(best(name))} | ${(best(name) / best(base)).toFixed(2)} | ${cpu.toFixed(2)} | ${cpuRatio.toFixed(2)} | ${median(runs.map((r) => r.get(name).p50)).toFixed(2)} | ${median(runs.map((r) => r.get(name).p99)).toFixed(2)} |`,
  );
}
if (loads.length > 0) out.push('', `Load average (1 min) during the rows: ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}, median ${median(loads).toFixed(2)}.`);
console.log(out.join('\n'));
