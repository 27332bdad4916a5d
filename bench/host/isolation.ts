/**
 * Isolation between worlds on one host (issue 31, "Measure" 3): a reader of world A (autocannon,
 * `connections` connections, retrieving one Stripe customer) alone, then while world B runs a
 * runaway: a scenario `js` handler matching every request of B's Stripe twin that never
 * returns, hammered by `attackers` clients one request after another. Two runaways: an
 * interpreted loop (`for (;;) {}`, which the sandbox stops at the call's time limit, 2.5 s by
 * default) and a loop over native work (`for (;;) Array(1e6).fill(0);`, which the interpreter's
 * interrupts barely see: the lane's watchdog ends its worker past the time limit, and the lane
 * starts another). B's answers are 500 `handler_timeout`s.
 *
 * Each round runs the reader alone, then with each runaway; each ratio is taken against the
 * alone run of its own round, and the medians over the rounds are reported. Latencies are the
 * reader's own (every answer's, from autocannon's per-response event, in fractional ms).
 * The host runs with `--budget off`: the figures are latencies, not 429s.
 */
import autocannon from 'autocannon';
import { startHostChild, type HostChild } from './child.js';
import { createCustomer, createWorld, expectJson, median, quantile, retrieveCustomer, round, vendorHeaders, type MadeWorld } from './client.js';
import { setPriority } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';

export interface IsolationOptions {
  dir: string;
  /** Seconds per reader run. */
  seconds: number;
  rounds: number;
  connections: number;
  attackers: number;
  /** The runaways' ids (RUNAWAYS), in order. */
  runaways: readonly string[];
}

export const RUNAWAYS: readonly { id: string; what: string; js: string; niced?: true }[] = [
  { id: 'loop', what: 'an interpreted loop `for (;;) {}` (stopped at the call\'s time limit)', js: 'for (;;) {}' },
  { id: 'native', what: 'a native-work loop `for (;;) Array(1e6).fill(0);` (stopped by the lane\'s watchdog past the time limit; the lane starts again)', js: 'for (;;) Array(1e6).fill(0);' },
  // A diagnosis, not in the default set: whether the reader's tail comes from the runaway's
  // thread holding a core the host's main thread waits for. The bench, not the host, lowers
  // that thread's priority (setpriority on its thread id; restoring it needs root).
  { id: 'loop-niced', what: 'the interpreted loop, its lane thread (the host\'s busiest thread but the main one) set to nice 19 by the bench', js: 'for (;;) {}', niced: true },
];

/** The host's busiest thread other than its main one over `ms`, by CPU used. */
async function busiestThread(host: HostChild, ms: number): Promise<number | undefined> {
  const before = host.threadsCpuMs();
  await sleep(ms);
  let busiest: [number, number] | undefined;
  for (const [tid, used] of host.threadsCpuMs()) {
    const delta = used - (before.get(tid) ?? used);
    if (tid !== host.pid && (busiest === undefined || delta > busiest[1])) busiest = [tid, delta];
  }
  return busiest?.[0];
}

interface ReaderRun {
  requests: number;
  rps: number;
  non2xx: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU during the run, in % of one core: the host's main thread, its other threads, this process (the clients). */
  hostMainCpu: number;
  hostOtherCpu: number;
  clientCpu: number;
  /** The host main thread's CPU per reader answer, µs (it serves world B's few requests too). */
  hostMainUsPerRequest: number;
}

interface AttackRun {
  answers: number;
  statuses: Record<string, number>;
  medianMs: number;
  /** The first answer's body, shortened (what the runaway's caller is told). */
  sample: string;
}

export interface IsolationRow {
  /** `alone`, or a runaway's id. */
  id: string;
  what: string;
  requestsPerSecond: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
  non2xx: number;
  /** Median over the rounds of this run's p99 / the alone run's of the same round (1 for alone). */
  p99Ratio: number | null;
  p50Ratio: number | null;
  rpsRatio: number | null;
  /** Medians over the rounds, in % of one core: the host's main thread, its other threads (lanes, LMDB, GC), the bench's clients. */
  cpu: { hostMain: number | null; hostOther: number | null; client: number | null; hostMainUsPerRequest: number | null };
  /** A diagnosis row (the bench changed the host's scheduling), not one of the targets. */
  diagnosis: boolean;
  /** World B's answers meanwhile (none for alone). */
  runaway: { answers: number; statuses: Record<string, number>; medianMs: number | null; sample: string } | null;
}

export interface IsolationFigures {
  command: string;
  seconds: number;
  rounds: number;
  connections: number;
  attackers: number;
  rows: IsolationRow[];
}

async function read(host: HostChild, url: string, headers: Record<string, string>, seconds: number, connections: number): Promise<ReaderRun> {
  const latencies: number[] = [];
  const hostBefore = host.cpu();
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  let non2xx = 0;
  const instance = autocannon({ url, headers, connections, duration: seconds });
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) latencies.push(ms);
    else non2xx++;
  });
  const result = await instance;
  const percent = (ms: number): number => (100 * ms) / (performance.now() - started);
  const hostAfter = host.cpu();
  const client = process.cpuUsage(clientBefore);
  const mainMs = hostAfter.mainMs - hostBefore.mainMs;
  return {
    requests: latencies.length,
    rps: latencies.length / seconds,
    non2xx,
    errors: result.errors,
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    hostMainCpu: percent(mainMs),
    hostOtherCpu: percent(hostAfter.totalMs - hostBefore.totalMs - mainMs),
    clientCpu: percent((client.user + client.system) / 1000),
    hostMainUsPerRequest: (mainMs * 1000) / Math.max(1, latencies.length),
  };
}

/** `attackers` clients sending B requests back to back until `stop()`; answers what B said. */
function attack(world: MadeWorld, attackers: number): { stop(): Promise<AttackRun> } {
  let going = true;
  const statuses: Record<string, number> = {};
  const took: number[] = [];
  let sample = '';
  const loops = Array.from({ length: attackers }, async (_, i) => {
    while (going) {
      const started = performance.now();
      const response = await fetch(`${world.url}/stripe/v1/customers?attacker=${i}`, { headers: vendorHeaders(world.token) });
      const body = await response.text();
      if (sample === '') sample = body.slice(0, 300);
      took.push(performance.now() - started);
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    }
  });
  return {
    async stop() {
      going = false;
      await Promise.all(loops);
      return { answers: took.length, statuses, medianMs: median(took), sample };
    },
  };
}

export async function benchIsolation(o: IsolationOptions, log: (line: string) => void): Promise<IsolationFigures> {
  const host = await startHostChild(o.dir, ['--budget', 'off', '--idle', '3600']);
  try {
    const a = await createWorld(host, 'bench', 'reader', ['stripe']);
    const b = await createWorld(host, 'bench', 'runaway', ['stripe']);
    const customer = await createCustomer(a, 0);
    await retrieveCustomer(a, customer);
    const url = `${a.url}/stripe/v1/customers/${customer}`;
    const headers = vendorHeaders(a.token);
    await read(host, url, headers, Math.min(2, o.seconds), o.connections); // warm-up

    const runaways = o.runaways.map((id) => {
      const found = RUNAWAYS.find((r) => r.id === id);
      if (found === undefined) throw new Error(`no runaway ${id}; choose from ${RUNAWAYS.map((r) => r.id).join(', ')}`);
      return found;
    });
    const runs = new Map<string, { reader: ReaderRun[]; attack: AttackRun[] }>([['alone', { reader: [], attack: [] }]]);
    for (const r of runaways) runs.set(r.id, { reader: [], attack: [] });
    for (let round = 0; round < o.rounds; round++) {
      runs.get('alone')!.reader.push(await read(host, url, headers, o.seconds, o.connections));
      for (const runaway of runaways) {
        const scenario = { handlers: [{ name: `runaway-${runaway.id}`, match: { path: '/*' }, js: runaway.js }] };
        await expectJson(
          await fetch(`${b.api}/twins/stripe/scenario`, { method: 'PUT', headers: { 'x-kit-token': b.token, 'content-type': 'application/json' }, body: JSON.stringify(scenario) }),
          200,
          `PUT ${b.name} scenario`,
        );
        const attackers = attack(b, o.attackers);
        await sleep(200); // the attackers' first calls under way
        const niced = runaway.niced === true ? await busiestThread(host, 300) : undefined;
        if (niced !== undefined) setPriority(niced, 19);
        const reader = await read(host, url, headers, o.seconds, o.connections);
        const attacked = await attackers.stop();
        if (niced !== undefined) {
          try {
            setPriority(niced, 0);
          } catch (e) {
            // Still at nice 19, it would skew every later run of this host.
            if (host.threadsCpuMs().has(niced)) throw new Error(`could not set the host's thread ${niced} back to nice 0 (${(e as Error).message}); run loop-niced as root, or leave it out`);
          }
        }
        const run = runs.get(runaway.id)!;
        run.reader.push(reader);
        run.attack.push(attacked);
        const alone = runs.get('alone')!.reader[round]!;
        log(
          `bench host: round ${round + 1}, ${runaway.id}: reader p99 ${reader.p99Ms.toFixed(2)} ms (alone ${alone.p99Ms.toFixed(2)} ms); ` +
            `host main thread ${reader.hostMainCpu.toFixed(0)}% (alone ${alone.hostMainCpu.toFixed(0)}%), other threads ${reader.hostOtherCpu.toFixed(0)}% (alone ${alone.hostOtherCpu.toFixed(0)}%); ` +
            `B answered ${attacked.answers} times ${JSON.stringify(attacked.statuses)}`,
        );
      }
    }

    const alone = runs.get('alone')!.reader;
    const rows: IsolationRow[] = [];
    for (const [id, { reader, attack: attacked }] of runs) {
      const perRound = (pick: (x: ReaderRun) => number): number | null => round(median(reader.map((x, i) => pick(x) / pick(alone[i]!))), 2);
      const statuses: Record<string, number> = {};
      for (const run of attacked) for (const [s, n] of Object.entries(run.statuses)) statuses[s] = (statuses[s] ?? 0) + n;
      rows.push({
        id,
        what: id === 'alone' ? 'reader of world A alone' : `while world B runs ${RUNAWAYS.find((r) => r.id === id)!.what}`,
        requestsPerSecond: round(median(reader.map((x) => x.rps)), 0),
        p50Ms: round(median(reader.map((x) => x.p50Ms))),
        p99Ms: round(median(reader.map((x) => x.p99Ms))),
        non2xx: reader.reduce((n, x) => n + x.non2xx + x.errors, 0),
        p99Ratio: perRound((x) => x.p99Ms),
        p50Ratio: perRound((x) => x.p50Ms),
        rpsRatio: perRound((x) => x.rps),
        diagnosis: RUNAWAYS.find((r) => r.id === id)?.niced === true,
        cpu: { hostMain: round(median(reader.map((x) => x.hostMainCpu)), 0), hostOther: round(median(reader.map((x) => x.hostOtherCpu)), 0), client: round(median(reader.map((x) => x.clientCpu)), 0), hostMainUsPerRequest: round(median(reader.map((x) => x.hostMainUsPerRequest)), 1) },
        runaway: id === 'alone' ? null : { answers: attacked.reduce((n, x) => n + x.answers, 0), statuses, medianMs: round(median(attacked.map((x) => x.medianMs)), 0), sample: attacked[0]?.sample ?? '' },
      });
    }
    return { command: host.command, seconds: o.seconds, rounds: o.rounds, connections: o.connections, attackers: o.attackers, rows };
  } finally {
    await host.stop();
  }
}
