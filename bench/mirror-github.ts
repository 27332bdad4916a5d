/**
 * The GitHub mirror's first useful paint (issue 33, "Measure"): the time from a navigation to a
 * repository's page (`{world_url}/github/repos/admin/<name>`) until the first rows of its file
 * table are on screen, for a repository of 1,000 files in one folder against one of 10 files, in
 * the same run and the same browser.
 *
 * A multi-world host in this process serves the built mirror (dist/pages/mirrors/github/, from
 * `node pages/build.mjs`) and one world with the GitHub twin; both repositories are made through
 * the vendor API (one `git.createTree` with the files' contents, a commit, the ref moved). Debian's
 * Chromium (playwright-core, headless) opens the world's origin, where the loopback session opens
 * on the first visit. A script injected before each page's own watches every animation frame from
 * the navigation and notes `performance.now()` (ms since the navigation started) at the first frame
 * in which a `.file-row` exists: that frame paints it. Also noted: the contents API's own time in
 * the page (resource timing of `…/contents`) and the time until every row is drawn (the mirror
 * draws the first 100 at once, the rest after the paint).
 *
 * Warm-up of 2 visits each, then `ROUNDS` (default 15) rounds of one visit to each, the order
 * swapped every round; medians. `node dist/bench/mirror-github.js` (after `npx tsc -p
 * tsconfig.json` and `node pages/build.mjs`); with BENCH_JSON=<file> the figures are written there too.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startMultiWorldHost } from '../host/index.js';
import { loadPageFiles } from '../host/node/pages.js';
import { loadBuiltinTwins } from '../sdk/twin/build.js';

const CHROMIUM = '/usr/bin/chromium';
/** dist/bench/mirror-github.js → the repository root. */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ROUNDS = Number(process.env['ROUNDS'] ?? 15);
const REPOS = [
  { name: 'ten', files: 10 },
  { name: 'thousand', files: 1000 },
] as const;

interface Visit {
  /** ms from the navigation's start to the frame that paints the first file row. */
  firstRow: number;
  /** ms from the navigation's start until every row is in the table. */
  allRows: number;
  /** The contents API's answer as the page timed it, ms. */
  contentsApi: number;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};
const round2 = (x: number): number => Math.round(x * 100) / 100;

async function main(): Promise<void> {
  const built = join(ROOT, 'dist', 'pages', 'mirrors', 'github');
  if (!existsSync(join(built, 'app.js'))) throw new Error(`${built}/app.js is missing: run node pages/build.mjs first`);
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing (apt-get install chromium)`);
  const dir = mkdtempSync(join(tmpdir(), 'kit-bench-mirror-github-'));
  const host = await startMultiWorldHost({ dir, twins: [...(await loadBuiltinTwins()).values()], pages: loadPageFiles(join(ROOT, 'dist', 'pages')), budget: false });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const made = await fetch(`${host.url}/-/worlds`, {
      method: 'POST',
      headers: { 'x-kit-token': host.adminToken, 'content-type': 'application/json' },
      body: JSON.stringify({ org: 'bench', world: 'code', vendors: ['github'] }),
    });
    if (made.status !== 201) throw new Error(`POST /-/worlds answered ${made.status}: ${await made.text()}`);
    const { token } = (await made.json()) as { token: string };
    const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
      const res = await fetch(`${host.url}/bench/code/github${path}`, {
        method,
        headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
      return (await res.json()) as T;
    };
    for (const r of REPOS) {
      await api('POST', '/user/repos', { name: r.name, auto_init: true });
      const head = await api<{ object: { sha: string } }>('GET', `/repos/admin/${r.name}/git/ref/heads/main`);
      const tree = await api<{ sha: string }>('POST', `/repos/admin/${r.name}/git/trees`, {
        tree: Array.from({ length: r.files }, (_, i) => ({ path: `file-${String(i).padStart(4, '0')}.txt`, mode: '100644', type: 'blob', content: `file ${i}\n` })),
      });
      const commit = await api<{ sha: string }>('POST', `/repos/admin/${r.name}/git/commits`, { message: `${r.files} files`, tree: tree.sha, parents: [head.object.sha] });
      await api('PATCH', `/repos/admin/${r.name}/git/refs/heads/main`, { sha: commit.sha });
    }

    const origin = `http://code--bench.localhost:${new URL(host.url).port}`;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addInitScript(() => {
      const w = window as unknown as { __firstRow?: number };
      const watch = () => {
        if (document.querySelector('.file-row') !== null) w.__firstRow = performance.now();
        else requestAnimationFrame(watch);
      };
      requestAnimationFrame(watch);
    });
    const page = await context.newPage();
    page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
    const visit = async (name: string, rows: number): Promise<Visit> => {
      await page.goto(`${origin}/bench/code/github/repos/admin/${name}`);
      await page.waitForFunction(() => (window as unknown as { __firstRow?: number }).__firstRow !== undefined, undefined, { timeout: 30_000 });
      await page.waitForFunction((n) => document.querySelectorAll('.file-row').length >= n, rows, { timeout: 30_000 });
      const allRows = await page.evaluate(() => performance.now());
      const firstRow = await page.evaluate(() => (window as unknown as { __firstRow: number }).__firstRow);
      const contentsApi = await page.evaluate(() => {
        const e = performance.getEntriesByType('resource').find((r) => new URL(r.name).pathname.endsWith('/contents')) as { responseEnd: number; startTime: number } | undefined;
        return e === undefined ? NaN : e.responseEnd - e.startTime;
      });
      return { firstRow, allRows, contentsApi };
    };

    const samples: Record<string, Visit[]> = Object.fromEntries(REPOS.map((r) => [r.name, []]));
    for (let i = 0; i < 2; i++) for (const r of REPOS) await visit(r.name, r.files);
    const loadBefore = loadavg();
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? REPOS : [...REPOS].reverse();
      for (const r of order) samples[r.name]!.push(await visit(r.name, r.files));
    }
    const loadAfter = loadavg();

    const figures = REPOS.map((r) => {
      const s = samples[r.name]!;
      return { repository: r.name, files: r.files, firstRowMs: round2(median(s.map((v) => v.firstRow))), allRowsMs: round2(median(s.map((v) => v.allRows))), contentsApiMs: round2(median(s.map((v) => v.contentsApi))) };
    });
    const [small, big] = figures as [(typeof figures)[0], (typeof figures)[0]];
    const result = {
      rounds: ROUNDS,
      loadavg: { before: loadBefore.map(round2), after: loadAfter.map(round2) },
      repositories: figures,
      ratio: { firstRow: round2(big.firstRowMs / small.firstRowMs), allRows: round2(big.allRowsMs / small.allRowsMs), contentsApi: round2(big.contentsApiMs / small.contentsApiMs) },
    };
    console.log('| repository | files | first row painted, ms | all rows drawn, ms | contents API, ms |');
    console.log('|---|---:|---:|---:|---:|');
    for (const f of figures) console.log(`| \`${f.repository}\` | ${f.files} | ${f.firstRowMs} | ${f.allRowsMs} | ${f.contentsApiMs} |`);
    console.log(`\n1,000 files / 10 files: first row ${result.ratio.firstRow}×, all rows ${result.ratio.allRows}×, contents API ${result.ratio.contentsApi}× (medians of ${ROUNDS} rounds; load average ${result.loadavg.before.join(' ')} → ${result.loadavg.after.join(' ')})`);
    const out = process.env['BENCH_JSON'];
    if (out !== undefined && out !== '') writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await browser.close();
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
