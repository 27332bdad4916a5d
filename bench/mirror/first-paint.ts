/**
 * The Stripe mirror's first useful paint: the time from a navigation to
 * `{world_url}/stripe/v1/customers` until the first rows of the customers table are painted,
 * in Chromium, for a world of 10,000 customers against a world of 10, on one multi-world host
 * in the same run (ratio against the first world; rounds go through the worlds in turn, each
 * round in another order). A world of 20 customers (one whole page: the 10,000's first screen
 * shows 20 rows, the 10's only 10) tells what the rows cost from what the world's size does.
 * The mirror reads one page of 20 with Stripe's cursor, so the sizes should cost alike; the
 * requests each load made and the bytes they fetched are counted to show it.
 *
 *   node pages/build.mjs && npx tsc -p tsconfig.json
 *   node dist/bench/mirror/first-paint.js            # 10, 20 and 10,000 customers, 15 rounds
 *   KIT_BENCH_MIRROR_SIZES=10,1000 KIT_BENCH_MIRROR_ROUNDS=5 node dist/bench/mirror/first-paint.js
 *
 * The customers are made through the world's Stripe API (`POST /v1/customers` with the world's
 * token as the key, 32 at a time), as an app would. Writes its figures as JSON to BENCH_JSON
 * when set (bench/results/json.ts). Needs Debian's Chromium at /usr/bin/chromium and the built
 * pages (dist/pages/). Nothing here asserts a time.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startMultiWorldHost } from '../../host/index.js';
import { defaultPagesDir, loadPageFiles } from '../../host/node/pages.js';
import { loadBuiltinTwins } from '../../sdk/twin/build.js';
import { writeBenchJson } from '../results/json.js';

const CHROMIUM = process.env['KIT_BENCH_CHROMIUM'] ?? '/usr/bin/chromium';
/** The worlds' sizes in customers; ratios are taken against the first. */
const SIZES = (process.env['KIT_BENCH_MIRROR_SIZES'] ?? '10,20,10000').split(',').map((x) => Number(x.trim()));
const ROUNDS = Number(process.env['KIT_BENCH_MIRROR_ROUNDS'] ?? 15);
const CONCURRENCY = 32;
/** The built pages: dist/pages/ beside the compiled tree. */
const PAGES = defaultPagesDir();

/** In the page: when the first row of the customers table is in the document, the next frame's time since navigation start. */
function markFirstRows(): void {
  const w = window as unknown as { __firstRows?: number };
  const seen = (): boolean => document.querySelector('table[aria-label="Customers"] tbody tr') !== null;
  const observer = new MutationObserver(() => {
    if (!seen()) return;
    observer.disconnect();
    requestAnimationFrame(() => {
      w.__firstRows = performance.now();
    });
  });
  observer.observe(document, { childList: true, subtree: true });
}

/** One world's figures, as written to BENCH_JSON (`rows`, in the order of the sizes). */
export interface MirrorRow {
  world: string;
  customers: number;
  seedSeconds: number;
  firstPaintMs: { median: number; p90: number; min: number };
  /** Median requests of one load (the document, its files, the session, the list, the account store). */
  requests: number;
  /** Median requests to the Stripe API of one load: the list's page. */
  vendorRequests: number;
  kilobytes: number;
  listCallMs: number;
}

export interface MirrorFigures {
  rounds: number;
  rows: MirrorRow[];
  /** The last size's median first paint over the first's. */
  ratio: number;
  load: number[];
}

interface Load {
  ms: number;
  requests: number;
  vendorRequests: number;
  bytes: number;
}

async function loadOnce(page: Page, url: string): Promise<Load> {
  let requests = 0;
  let vendorRequests = 0;
  let bytes = 0;
  const counted: Promise<void>[] = [];
  const onFinished = (req: import('playwright-core').Request) => {
    requests++;
    if (/\/stripe\/v1\//.test(new URL(req.url()).pathname) && req.resourceType() === 'fetch') vendorRequests++;
    counted.push(req.sizes().then((s) => void (bytes += s.responseBodySize), () => undefined));
  };
  page.on('requestfinished', onFinished);
  await page.goto(url);
  await page.waitForFunction(() => (window as unknown as { __firstRows?: number }).__firstRows !== undefined, undefined, { timeout: 60_000 });
  const ms = await page.evaluate(() => (window as unknown as { __firstRows: number }).__firstRows);
  // Whatever the first screen asked for besides the list (the account switcher's store) has settled.
  await page.waitForLoadState('networkidle');
  page.off('requestfinished', onFinished);
  await Promise.all(counted);
  return { ms, requests, vendorRequests, bytes };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
}

async function makeCustomers(base: string, token: string, count: number): Promise<number> {
  const started = Date.now();
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= count) return;
      const res = await fetch(`${base}/stripe/v1/customers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: `email=person${i}%40example.com&name=Person+${i}`,
      });
      if (res.status !== 200) throw new Error(`POST /v1/customers answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count) }, worker));
  return (Date.now() - started) / 1000;
}

/** One list call from Node, as the page makes it (the server's side of the paint), median of `n`. */
async function listMs(base: string, token: string, n: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const res = await fetch(`${base}/stripe/v1/customers?limit=20&expand[]=data.invoice_settings.default_payment_method`, { headers: { authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    times.push(performance.now() - t);
  }
  return median(times);
}

async function main(): Promise<void> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing (apt-get install chromium)`);
  if (!existsSync(join(PAGES, 'mirrors', 'stripe', 'app.js'))) throw new Error(`${PAGES}/mirrors/stripe/app.js is missing: run node pages/build.mjs first`);
  const dir = mkdtempSync(join(tmpdir(), 'kit-bench-mirror-'));
  const host = await startMultiWorldHost({ dir, twins: [...(await loadBuiltinTwins()).values()], pages: loadPageFiles(PAGES), consoleDir: null, budget: false });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const contexts: BrowserContext[] = [];
  try {
    const port = new URL(host.url).port;
    const worlds: { name: string; customers: number; url: string; base: string; token: string; page?: Page; seedSeconds: number }[] = [];
    if (SIZES.length < 2 || SIZES.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`KIT_BENCH_MIRROR_SIZES must name two or more sizes, got ${SIZES.join(',')}`);
    for (const customers of SIZES) {
      const name = `c${customers}`;
      const res = await fetch(`${host.url}/-/worlds`, {
        method: 'POST',
        headers: { 'x-kit-token': host.adminToken, 'content-type': 'application/json' },
        body: JSON.stringify({ org: 'bench', world: name, vendors: ['stripe'] }),
      });
      if (res.status !== 201) throw new Error(`POST /-/worlds answered ${res.status}: ${await res.text()}`);
      const { token } = (await res.json()) as { token: string };
      const base = `${host.url}/bench/${name}`;
      const seedSeconds = await makeCustomers(base, token, customers);
      console.error(`mirror: ${name}: ${customers} customers made in ${seedSeconds.toFixed(1)} s`);
      worlds.push({ name, customers, base, token, seedSeconds, url: `http://${name}--bench.localhost:${port}/bench/${name}/stripe/v1/customers` });
    }
    // A context per world (its session cookie lives at its own origin); a first load opens the
    // session (loopback) and warms the browser's cache of the mirror's files.
    for (const w of worlds) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      contexts.push(context);
      await context.addInitScript(markFirstRows);
      w.page = await context.newPage();
      await loadOnce(w.page, w.url);
    }
    const loads = new Map<string, Load[]>(worlds.map((w) => [w.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate which goes first, so that none always follows another.
      const order = worlds.map((_, i) => worlds[(i + round) % worlds.length]!);
      for (const w of order) loads.get(w.name)!.push(await loadOnce(w.page!, w.url));
    }
    const rows: MirrorRow[] = [];
    for (const w of worlds) {
      const ls = loads.get(w.name)!;
      rows.push({
        world: w.name,
        customers: w.customers,
        seedSeconds: w.seedSeconds,
        firstPaintMs: { median: median(ls.map((l) => l.ms)), p90: quantile(ls.map((l) => l.ms), 0.9), min: Math.min(...ls.map((l) => l.ms)) },
        requests: median(ls.map((l) => l.requests)),
        vendorRequests: median(ls.map((l) => l.vendorRequests)),
        kilobytes: median(ls.map((l) => l.bytes)) / 1000,
        listCallMs: await listMs(w.base, w.token, 21),
      });
    }
    const base = rows[0]!;
    console.log(`\nStripe mirror, first useful paint (navigation → first customer rows painted), ${ROUNDS} rounds, the worlds in turn; ${availableParallelism()} CPUs, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
    console.log(`| world | customers | first paint ms (median) | × ${base.customers} customers | p90 ms | min ms | requests per load | of which Stripe API | fetched kB | one list call from Node, ms |`);
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of rows) {
      console.log(`| ${r.world} | ${r.customers} | ${r.firstPaintMs.median.toFixed(1)} | ${(r.firstPaintMs.median / base.firstPaintMs.median).toFixed(2)} | ${r.firstPaintMs.p90.toFixed(1)} | ${r.firstPaintMs.min.toFixed(1)} | ${r.requests} | ${r.vendorRequests} | ${r.kilobytes.toFixed(1)} | ${r.listCallMs.toFixed(2)} |`);
    }
    const last = rows[rows.length - 1]!;
    const ratio = last.firstPaintMs.median / base.firstPaintMs.median;
    console.log(`\n${last.customers} / ${base.customers} customers: first paint ${ratio.toFixed(2)}×, one list call ${(last.listCallMs / base.listCallMs).toFixed(2)}×`);
    const figures: MirrorFigures = { rounds: ROUNDS, rows, ratio, load: loadavg() };
    writeBenchJson(figures);
  } finally {
    for (const c of contexts) await c.close();
    await browser.close();
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
