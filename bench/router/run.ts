/**
 * Router micro benchmark: a twin with ~200 Stripe-shaped routes, matched by the trie
 * router and by a naive linear scan of regular expressions in the same run.
 * Each task matches a fixed mix of 200 requests per iteration, so the per-request time
 * is the iteration time / 200 (a single match is too short for the timer).
 *
 * Run (from the repository root; the banner lets the bundled yaml package require Node built-ins):
 *   npx esbuild bench/router/run.ts --bundle --platform=node --format=esm --outfile=/tmp/router-bench.mjs \
 *     "--banner:js=import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" \
 *     && node /tmp/router-bench.mjs
 * or after `npx tsc -p tsconfig.json`: node dist/bench/router/run.js
 */

import { Bench } from 'tinybench';
import type { Matcher } from '../../sdk/twin/types.js';
import { compileRouter, type RouteRequest } from '../../runtime/router/index.js';
import { parseScenario, ScenarioState, type ScenarioRequest } from '../../runtime/scenario/index.js';
import { writeBenchJson } from '../results/json.js';

// The worked examples of docs/scenarios.md in one document.
const SCENARIO = `
handlers:
  - { name: decline-next-charge, match: POST /v1/payment_intents, times: 1, respond: { status: 402, headers: { request-id: "req_{{request.id}}" }, body: { error: { type: card_error, code: card_declined } } } }
  - { name: rate-limited, match: /v1/customers, when: { state: started }, times: 3, respond: { status: 429, headers: { Retry-After: "1" } }, then: { state: recovered } }
  - { name: slow-lists, match: "GET /v1/:resource", delay: 2s }
  - { name: slow-nested-lists, match: "GET /v1/:resource/:id/:list", delay: 2s }
  - { name: drop, match: POST /v1/charges, fault: reset }
  - { name: computed, match: GET /v1/customers/:id, js: "return { status: 200 }" }
`;

const RESOURCES = [
  'accounts', 'application_fees', 'balance_transactions', 'charges', 'checkout_sessions', 'coupons',
  'credit_notes', 'customers', 'disputes', 'events', 'files', 'file_links', 'invoiceitems', 'invoices',
  'mandates', 'payment_intents', 'payment_links', 'payment_methods', 'payouts', 'plans', 'prices',
  'products', 'promotion_codes', 'quotes', 'refunds', 'reviews', 'setup_intents', 'shipping_rates',
  'sources', 'subscription_items', 'subscription_schedules', 'subscriptions', 'tax_codes', 'tax_rates',
  'tokens', 'topups', 'transfers', 'webhook_endpoints',
];

function routes(): { name: string; match: Matcher; value: string }[] {
  const out: { name: string; match: Matcher; value: string }[] = [];
  for (const r of RESOURCES) {
    out.push({ name: `${r}.list`, match: { method: 'GET', path: `/v1/${r}` }, value: `${r}.list` });
    out.push({ name: `${r}.create`, match: { method: 'POST', path: `/v1/${r}` }, value: `${r}.create` });
    out.push({ name: `${r}.retrieve`, match: { method: 'GET', path: `/v1/${r}/:id` }, value: `${r}.retrieve` });
    out.push({ name: `${r}.update`, match: { method: 'POST', path: `/v1/${r}/:id` }, value: `${r}.update` });
    out.push({ name: `${r}.delete`, match: { method: 'DELETE', path: `/v1/${r}/:id` }, value: `${r}.delete` });
  }
  // Literal routes declared after the parameter routes they overlap with.
  for (const r of RESOURCES.slice(0, 12)) out.push({ name: `${r}.search`, match: { method: 'GET', path: `/v1/${r}/search` }, value: `${r}.search` });
  out.push({ name: 'customers.sources', match: { method: 'GET', path: '/v1/customers/:customer/sources' }, value: 'customers.sources' });
  out.push({ name: 'files.content', match: { method: 'GET', path: '/files/*path' }, value: 'files.content' });
  return out;
}

/** The baseline: one anchored regex per route, scanned in declaration order (no literal-first precedence). */
function naive(rs: { match: Matcher; value: string }[]) {
  const compiled = rs.map((r) => {
    const names: string[] = [];
    const source = r.match.path.split('/').map((s) => {
      if (s.startsWith(':')) { names.push(s.slice(1)); return '([^/]+)'; }
      if (s.startsWith('*')) { names.push(s.slice(1)); return '(.*)'; }
      return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    }).join('/');
    return { re: new RegExp(`^${source}$`), names, method: r.match.method, value: r.value };
  });
  return (req: RouteRequest): { value: string; params: Record<string, string> } | null => {
    for (const c of compiled) {
      if (c.method !== undefined && c.method !== req.method) continue;
      const m = c.re.exec(req.path);
      if (m === null) continue;
      const params: Record<string, string> = {};
      c.names.forEach((n, i) => { params[n] = decodeURIComponent(m[i + 1] as string); });
      return { value: c.value, params };
    }
    return null;
  };
}

function requests(): RouteRequest[] {
  const methods = ['GET', 'POST', 'GET', 'DELETE'];
  const out: RouteRequest[] = [];
  for (let i = 0; i < 200; i++) {
    const r = RESOURCES[(i * 7) % RESOURCES.length] as string;
    const method = methods[i % methods.length] as string;
    const path = i % 5 === 0 ? `/v1/${r}` : i % 11 === 0 ? `/v1/${r}/missing/deep` : `/v1/${r}/id_${i}abcdef`;
    out.push({ method, path, query: {}, headers: {}, body: undefined });
  }
  return out;
}

export async function run(): Promise<string> {
  const rs = routes();
  const trie = compileRouter(rs);
  const scan = naive(rs);
  const reqs = requests();
  // Both answer the same for this mix (no overlapping literal routes are requested).
  for (const r of reqs) {
    if ((trie.match(r)?.value ?? null) !== (scan(r)?.value ?? null)) throw new Error(`disagree on ${r.method} ${r.path}`);
  }
  let sink = 0;
  const bench = new Bench({ time: 1500, warmupTime: 300 });
  bench.add('trie router (compileRouter)', () => { for (const r of reqs) if (trie.match(r) !== null) sink++; });
  bench.add('naive regex scan', () => { for (const r of reqs) if (scan(r) !== null) sink++; });
  const miss = reqs.filter((r) => trie.match(r) === null);
  bench.add('trie nearestMiss (misses only)', () => { for (const r of miss) if (trie.nearestMiss(r) !== null) sink++; });
  // Requests the scenario passes on, as most requests are: nothing answers, one is slowed or none matches.
  const scenario = new ScenarioState(parseScenario(SCENARIO));
  const sreqs: ScenarioRequest[] = reqs.filter((r) => !r.path.startsWith('/v1/customers')).map((r, i) => ({ ...r, method: r.method === 'POST' ? 'PUT' : r.method, id: `req_${i}` }));
  bench.add('scenario decide (6 handlers)', () => { for (const r of sreqs) if (scenario.decide(r).kind === 'pass') sink++; });
  await bench.run();
  const per = (name: string, n: number): number => {
    const t = bench.tasks.find((x) => x.name === name);
    const res = t?.result;
    if (!res || !('latency' in res)) throw new Error(`no result for ${name}`);
    return (res.latency.mean * 1000) / n; // ms per iteration → µs per request
  };
  const trieUs = per('trie router (compileRouter)', reqs.length);
  const naiveUs = per('naive regex scan', reqs.length);
  const missUs = per('trie nearestMiss (misses only)', miss.length);
  const decideUs = per('scenario decide (6 handlers)', sreqs.length);
  writeBenchJson({
    node: process.version,
    routes: rs.length,
    rows: [
      { task: 'trie router match', usPerRequest: trieUs, ratioToNaive: trieUs / naiveUs },
      { task: 'naive regex scan (baseline)', usPerRequest: naiveUs, ratioToNaive: 1 },
      { task: 'trie nearestMiss (misses only)', usPerRequest: missUs, ratioToNaive: missUs / naiveUs },
      { task: 'scenario decide, 6 handlers, request passed on', usPerRequest: decideUs, ratioToNaive: decideUs / naiveUs },
    ],
  });
  const lines = [
    `routes: ${rs.length}, requests per iteration: ${reqs.length} (${miss.length} match nothing), sink ${sink > 0 ? 'ok' : 'empty'}`,
    '',
    '| task | µs per request | vs naive regex scan |',
    '|---|---|---|',
    `| trie router \`match\` | ${trieUs.toFixed(3)} | ${(trieUs / naiveUs).toFixed(3)}× |`,
    `| naive regex scan (baseline) | ${naiveUs.toFixed(3)} | 1× |`,
    `| trie \`nearestMiss\` (misses only) | ${missUs.toFixed(3)} | ${(missUs / naiveUs).toFixed(3)}× |`,
    `| scenario \`decide\`, 6 handlers, request passed on | ${decideUs.toFixed(3)} | ${(decideUs / naiveUs).toFixed(3)}× |`,
  ];
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  run().then((text) => console.log(text), (e: unknown) => { console.error(e); process.exitCode = 1; });
}
