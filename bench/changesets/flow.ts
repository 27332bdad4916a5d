/**
 * Changesets (issue 35, "Measure"): n changes through the whole flow, as a user has it by default.
 * Three worlds, each served as `kit world serve` serves it in a process of its own
 * (bench/roots/server.ts): `real` plays the vendor, `main` is rooted at real's Stripe twin
 * (`http://127.0.0.1:<port>/local/real/stripe`, real's token sealed as `bearer`), `dev` names
 * `main` as its origin (`PUT …/origin`, main's URL and token).
 *
 * In `dev`, n Stripe customers are created through the vendor API over loopback, one request at
 * a time (each a durable entry): the baseline, one vendor request, measured in the same run.
 * Then, each timed as its caller sees it, with each process's CPU from /proc:
 *
 * - cut: `POST {dev}/changesets` (n changes);
 * - push: `POST {dev}/origin/push` (dev sends the changeset to main, which appends n entries);
 * - verify: `POST {main}/changesets/<name>/verify` with one check stored at main;
 * - approve: `POST {main}/changesets/<name>/approve` (one Ed25519 signature over the hash);
 * - deploy: `POST {main}/deploy/<name>`: n `POST /v1/customers` to real, one after the other,
 *   through main's outbound fetch, each with its receipt kept durably.
 *
 * Checked, else the bench fails: the cut holds n changes, the push appends n entries to main,
 * the verification passes with one check over n changes, the deploy answers `all` with n
 * receipts, each ok, and real holds n customers afterwards, the first one under the receipt's id
 * with dev's email. Each phase's cost per change is set against one create: wall time per change
 * over a create's mean latency, and the CPU of every process per change over dev's CPU per create.
 */
import { join } from 'node:path';
import { round } from '../host/client.js';
import { customerForm } from '../roots/seed.js';
import { COMMAND, expectStatus, fileBytes, rootAt, send, startWorldServer, worldApi, type Answer, type WorldServer } from '../roots/servers.js';

/** The one check stored at main: every customer a change writes has an email. */
export const CHECK_SOURCE = `export const check = { name: 'customers-have-email', run(entry) {
  const missing = entry.writes.filter((w) => w.type === 'customer' && w.value && !w.value.o.email).map((w) => w.id);
  return missing.length === 0 ? true : ['customers without an email: ' + missing.join(', ')];
} };`;

export type Phase = 'cut' | 'push' | 'verify' | 'approve' | 'deploy';
export const PHASES: readonly Phase[] = ['cut', 'push', 'verify', 'approve', 'deploy'];

export interface PhaseFigures {
  phase: Phase;
  what: string;
  /** As the caller sees it, ms. */
  wallMs: number;
  /** Each process's CPU during it, ms (dev, main, real), and their sum. */
  cpuMs: { dev: number; main: number; real: number; total: number };
  /** Main's LMDB data file's growth during it, bytes. */
  mainFileBytes: number;
  perChange: { wallMs: number | null; cpuMs: number | null };
  /** Per change over one create: wall time over a create's mean latency, CPU over dev's CPU per create. */
  ratio: { wall: number | null; cpu: number | null };
}

export interface ChangesetFigures {
  command: string;
  changes: number;
  root: string;
  origin: string;
  /** The baseline: n `POST /v1/customers` to dev over loopback, one at a time. */
  create: { what: string; wallMs: number; meanMs: number; p50Ms: number; p99Ms: number; cpuMsPerCreate: number; devFileBytes: number };
  /** The changeset as `GET {main}/changesets/<name>` answers it, bytes. */
  changesetBytes: number;
  phases: PhaseFigures[];
  /** The whole flow after the creates (cut to deploy) per change, over one create. */
  total: { wallMs: number; cpuMs: number; ratio: { wall: number | null; cpu: number | null } };
}

interface Worlds {
  real: WorldServer;
  main: WorldServer;
  dev: WorldServer;
}

const ratioOf = (a: number, b: number, digits = 2): number | null => (b > 0 ? round(a / b, digits) : null);

async function putCheck(server: WorldServer, name: string, source: string): Promise<void> {
  const res = await fetch(`${server.api}/checks/${name}`, { method: 'PUT', headers: { 'x-kit-token': server.token, 'content-type': 'text/javascript' }, body: source });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`PUT …/checks/${name} answered ${res.status}: ${text.slice(0, 300)}`);
}

/** Starts the three worlds, each in a process of its own, and wires main's root and dev's origin. */
async function startWorlds(dir: string, log: (line: string) => void): Promise<Worlds> {
  log('bench changesets: starting real, main and dev, each served as `kit world serve` serves it');
  const started = await Promise.allSettled(['real', 'main', 'dev'].map((w) => startWorldServer(join(dir, w), w, 0)));
  const ok = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  if (ok.length !== 3) {
    await Promise.all(ok.map((s) => s.stop()));
    throw (started.find((s) => s.status === 'rejected') as PromiseRejectedResult).reason as Error;
  }
  const [real, main, dev] = ok as [WorldServer, WorldServer, WorldServer];
  return { real, main, dev };
}

/** Runs one phase, measuring its wall time, each process's CPU and main's data file. */
async function phase(worlds: Worlds, what: { phase: Phase; what: string }, n: number, create: ChangesetFigures['create'], work: () => Promise<Answer>): Promise<{ figures: PhaseFigures; answer: Answer }> {
  const cpu = { dev: worlds.dev.cpuMs(), main: worlds.main.cpuMs(), real: worlds.real.cpuMs() };
  const file = fileBytes(worlds.main.dataFile).size;
  const answer = await work();
  const cpuMs = { dev: worlds.dev.cpuMs() - cpu.dev, main: worlds.main.cpuMs() - cpu.main, real: worlds.real.cpuMs() - cpu.real, total: 0 };
  cpuMs.total = cpuMs.dev + cpuMs.main + cpuMs.real;
  const wallMs = round(answer.ms, 1) as number;
  const perChange = { wallMs: round(wallMs / n, 3), cpuMs: round(cpuMs.total / n, 3) };
  return {
    answer,
    figures: {
      ...what,
      wallMs,
      cpuMs,
      mainFileBytes: fileBytes(worlds.main.dataFile).size - file,
      perChange,
      ratio: { wall: ratioOf(wallMs / n, create.meanMs), cpu: ratioOf(cpuMs.total / n, create.cpuMsPerCreate) },
    },
  };
}

export async function benchChangesets(dir: string, n: number, log: (line: string) => void): Promise<ChangesetFigures> {
  const worlds = await startWorlds(dir, log);
  try {
    return await measure(worlds, n, log);
  } finally {
    await Promise.all([worlds.real.stop(), worlds.main.stop(), worlds.dev.stop()]);
  }
}

async function measure(worlds: Worlds, n: number, log: (line: string) => void): Promise<ChangesetFigures> {
  const { real, main, dev } = worlds;
  const root = await rootAt(main, real);
  expectStatus(await worldApi(dev, 'PUT', '/origin', { url: main.url, token: main.token }), 200, 'PUT {dev}/origin');
  await putCheck(main, 'customers-have-email', CHECK_SOURCE);

  // The baseline: n creates in dev, one at a time, as an app's requests (the world's token as the API key).
  const headers = { authorization: `Bearer ${dev.token}`, 'content-type': 'application/x-www-form-urlencoded' };
  const latencies: number[] = [];
  let firstId = '';
  const devCpu = dev.cpuMs();
  const devFile = fileBytes(dev.dataFile).size;
  const createsStarted = performance.now();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const res = await fetch(`${dev.url}/stripe/v1/customers`, { method: 'POST', headers, body: customerForm(i) });
    const text = await res.text();
    latencies.push(performance.now() - t);
    if (res.status !== 200) throw new Error(`POST /v1/customers answered ${res.status}: ${text.slice(0, 300)}`);
    if (i === 0) firstId = (JSON.parse(text) as { id: string }).id;
  }
  const createsMs = performance.now() - createsStarted;
  const sorted = [...latencies].sort((a, b) => a - b);
  const create = {
    what: `${n} Stripe POST /v1/customers to dev over loopback, one at a time (the world's token as the API key; each a durable entry)`,
    wallMs: round(createsMs, 1) as number,
    meanMs: round(createsMs / n, 3) as number,
    p50Ms: round(sorted[Math.floor(0.5 * (n - 1))]!, 3) as number,
    p99Ms: round(sorted[Math.floor(0.99 * (n - 1))]!, 3) as number,
    cpuMsPerCreate: round((dev.cpuMs() - devCpu) / n, 3) as number,
    devFileBytes: fileBytes(dev.dataFile).size - devFile,
  };
  log(`bench changesets: ${n} creates in ${create.wallMs} ms (mean ${create.meanMs} ms, dev CPU ${create.cpuMsPerCreate} ms each)`);
  const unpushed = expectStatus<{ unpushed: Record<string, number> }>(await worldApi(dev, 'GET', '/changesets'), 200, 'GET {dev}/changesets').unpushed;
  if (unpushed['stripe'] !== n) throw new Error(`dev counts ${JSON.stringify(unpushed)} unpushed changes, not ${n}`);

  const phases: PhaseFigures[] = [];
  const run = async (p: Phase, what: string, work: () => Promise<Answer>): Promise<Answer> => {
    const { figures, answer } = await phase(worlds, { phase: p, what }, n, create, work);
    phases.push(figures);
    log(`bench changesets: ${p} ${figures.wallMs} ms (CPU dev ${figures.cpuMs.dev}, main ${figures.cpuMs.main}, real ${figures.cpuMs.real} ms)`);
    return answer;
  };

  const cut = expectStatus<{ name: string; changes: unknown[] }>(await run('cut', 'POST {dev}/changesets', () => worldApi(dev, 'POST', '/changesets', { message: `${n} customers` })), 201, 'POST {dev}/changesets');
  if (cut.changes.length !== n) throw new Error(`the cut holds ${cut.changes.length} changes, not ${n}`);
  const name = cut.name;

  const pushed = expectStatus<{ pushed: { changeset: string; appended: Record<string, [number, number]> }[] }>(await run('push', 'POST {dev}/origin/push (main appends the changes)', () => worldApi(dev, 'POST', '/origin/push')), 200, 'POST {dev}/origin/push');
  const range = pushed.pushed[0]?.appended['stripe'];
  if (pushed.pushed.length !== 1 || range === undefined || range[1] - range[0] + 1 !== n) throw new Error(`the push appended ${JSON.stringify(pushed.pushed)}, not ${n} entries`);

  const verdict = expectStatus<{ pass: boolean; checks: number; changes: number }>(await run('verify', `POST {main}/changesets/${name}/verify (one check)`, () => worldApi(main, 'POST', `/changesets/${name}/verify`)), 200, 'verify');
  if (!verdict.pass || verdict.checks !== 1 || verdict.changes !== n) throw new Error(`the verification answered ${JSON.stringify(verdict).slice(0, 300)}`);

  expectStatus(await run('approve', `POST {main}/changesets/${name}/approve`, () => worldApi(main, 'POST', `/changesets/${name}/approve`, { as: 'bench@example.com' })), 201, 'approve');

  const deployed = expectStatus<{ deployed: string; receipts: { ok: boolean; ids: Record<string, string> }[] }>(
    await run('deploy', `POST {main}/deploy/${name} (${n} POST /v1/customers to real through main's outbound fetch)`, () => worldApi(main, 'POST', `/deploy/${name}`)),
    200,
    'deploy',
  );
  if (deployed.deployed !== 'all' || deployed.receipts.length !== n || deployed.receipts.some((r) => !r.ok)) throw new Error(`the deploy answered ${deployed.deployed} with ${deployed.receipts.length} receipts`);

  // What real holds: n customers, the first under the receipt's id, with dev's email.
  const status = expectStatus<{ resources: { type: string; count: number }[] }>(await worldApi(real, 'GET', '/twins/stripe/status'), 200, 'GET {real}/twins/stripe/status');
  const count = status.resources.find((r) => r.type === 'customer')?.count ?? 0;
  if (count !== n) throw new Error(`real holds ${count} customers after the deploy, not ${n}`);
  const realFirst = deployed.receipts[0]!.ids[firstId];
  const atReal = expectStatus<{ email: string }>(await send('GET', `${real.url}/stripe/v1/customers/${realFirst}`, { authorization: `Bearer ${real.token}` }), 200, 'GET the first customer at real');
  if (atReal.email !== 'person0@example.com') throw new Error(`real's customer ${realFirst} has email ${atReal.email}`);

  const shown = await worldApi(main, 'GET', `/changesets/${name}`);
  expectStatus(shown, 200, 'GET {main}/changesets/<name>');
  const changesetBytes = Buffer.byteLength(shown.text);
  const wall = phases.reduce((s, p) => s + p.wallMs, 0);
  const cpu = phases.reduce((s, p) => s + p.cpuMs.total, 0);
  return {
    command: COMMAND,
    changes: n,
    root: root.replace(/:\d+\//, ':<port>/'),
    origin: main.url.replace(/:\d+\//, ':<port>/'),
    create,
    changesetBytes,
    phases,
    total: { wallMs: round(wall, 1) as number, cpuMs: cpu, ratio: { wall: ratioOf(wall / n, create.meanMs), cpu: ratioOf(cpu / n, create.cpuMsPerCreate) } },
  };
}
