/**
 * Many worlds on one host (issue 31, "Measure" 2), with the host in a child process so that
 * its RSS is its own:
 *
 * 1. A host that keeps every world open (`--max-open` twice the worlds, `--idle 3600`): `n`
 *    worlds made through `POST /-/worlds`, each then answering a Stripe create and a retrieve
 *    of what it made, `concurrency` worlds at a time. The total time, then the host's RSS with
 *    all of them open (checked in `GET /-/worlds`), before and after a forced collection.
 * 2. The same directory served again with `--idle <idle>`: every world answers a retrieve
 *    again (each opens), then the bench waits until `GET /-/worlds` shows none open; the RSS
 *    then, before and after a forced collection, and again `settle` seconds later (V8 gives
 *    the pages it freed back to the system some time after a collection, not at once).
 * 3. Closed worlds, one at a time: a first answer (the world opens) and a second right after
 *    (it is warm), `cold` of them; the medians and their ratio.
 */
import { startHostChild, type HostChild, type MemoryAfterGc } from './child.js';
import { createCustomer, createWorld, inParallel, median, MiB, onHost, quantile, retrieveCustomer, round, timed, worldsOpen, type MadeWorld } from './client.js';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ManyWorldsOptions {
  dir: string;
  worlds: number;
  /** Worlds made (and touched) at once. */
  concurrency: number;
  /** `--idle` of the second host, in seconds. */
  idleSeconds: number;
  /** Closed worlds timed cold then warm. */
  cold: number;
  /** Seconds to wait after every world closed before measuring the RSS again (V8 gives its freed pages back lazily). */
  settleSeconds: number;
}

interface Memory {
  /** Worlds open when measured (`GET /-/worlds`). */
  open: number;
  rssMiB: number | null;
  /** Of the RSS: anonymous memory, and file-backed (mostly the pages of LMDB's map that were read). */
  rssAnonMiB: number | null;
  rssFileMiB: number | null;
  rssAfterGcMiB: number | null;
  heapTotalAfterGcMiB: number | null;
  heapUsedAfterGcMiB: number | null;
  externalAfterGcMiB: number | null;
}

export interface ManyWorldsFigures {
  commands: { allOpen: string; idle: string };
  worlds: number;
  concurrency: number;
  idleSeconds: number;
  settleSeconds: number;
  /** Seconds to make every world and have each answer a create and a retrieve. */
  makeSeconds: number | null;
  /** Median and p99 of one world's POST /-/worlds + create + retrieve. */
  perWorldMs: { median: number | null; p99: number | null };
  /** Whether the child could force a collection (it runs with --expose-gc). */
  gcForced: boolean;
  memory: {
    started: Memory;
    allOpen: Memory;
    restarted: Memory;
    /** After every world answered again in the second host (its peak RSS meanwhile). */
    touchedPeakMiB: number | null;
    idleClosed: Memory;
    /** `settleSeconds` later, with no request meanwhile. */
    settled: Memory;
  };
  /** RSS per open world: (all open − started) / worlds, in MiB. */
  perOpenWorldMiB: number | null;
  /** Seconds for every world of the restarted host to answer a retrieve (each opening). */
  touchSeconds: number | null;
  /** Seconds from the last answer until `GET /-/worlds` showed none open. */
  idleCloseSeconds: number | null;
  coldFirstMs: { median: number | null; p90: number | null; max: number | null };
  warmMs: { median: number | null; p90: number | null };
  /** Median cold / median warm. */
  coldOverWarm: number | null;
  samples: number;
}

async function memoryOf(host: HostChild, open: number): Promise<Memory & { gc: MemoryAfterGc }> {
  const now = host.memory();
  const gc = await host.memoryAfterGc();
  return {
    open,
    rssMiB: round(MiB(now.rss), 1),
    rssAnonMiB: round(MiB(now.anon), 1),
    rssFileMiB: round(MiB(now.file), 1),
    rssAfterGcMiB: round(MiB(gc.rss), 1),
    heapTotalAfterGcMiB: round(MiB(gc.heapTotal), 1),
    heapUsedAfterGcMiB: round(MiB(gc.heapUsed), 1),
    externalAfterGcMiB: round(MiB(gc.external), 1),
    gc,
  };
}

const strip = ({ gc: _gc, ...m }: Memory & { gc: MemoryAfterGc }): Memory => m;

export async function benchManyWorlds(o: ManyWorldsOptions, log: (line: string) => void): Promise<ManyWorldsFigures> {
  const maxOpen = String(Math.max(2 * o.worlds, 2));
  const made: { world: MadeWorld; customer: string }[] = [];
  const perWorld: number[] = [];

  let host = await startHostChild(o.dir, ['--max-open', maxOpen, '--idle', '3600']);
  const allOpenCommand = host.command;
  let started: Memory & { gc: MemoryAfterGc };
  let allOpen: Memory & { gc: MemoryAfterGc };
  let makeSeconds: number;
  try {
    started = await memoryOf(host, 0);
    const t0 = performance.now();
    await inParallel(o.worlds, o.concurrency, async (i) => {
      perWorld.push(
        await timed(async () => {
          const world = await createWorld(host, 'bench', `w${i}`, ['stripe']);
          const customer = await createCustomer(world, i);
          await retrieveCustomer(world, customer);
          made[i] = { world, customer };
        }),
      );
    });
    makeSeconds = (performance.now() - t0) / 1000;
    const counts = await worldsOpen(host);
    if (counts.worlds !== o.worlds) throw new Error(`GET /-/worlds lists ${counts.worlds} worlds, not ${o.worlds}`);
    allOpen = await memoryOf(host, counts.open);
    log(`bench host: ${o.worlds} worlds made in ${makeSeconds.toFixed(1)} s; ${counts.open} open, RSS ${allOpen.rssMiB} MiB`);
  } finally {
    await host.stop();
  }

  host = await startHostChild(o.dir, ['--max-open', maxOpen, '--idle', String(o.idleSeconds)]);
  for (const m of made) m.world = onHost(m.world, host);
  try {
    const restarted = await memoryOf(host, (await worldsOpen(host)).open);
    const touchSeconds = (await timed(() => inParallel(o.worlds, o.concurrency, (i) => retrieveCustomer(made[i]!.world, made[i]!.customer)))) / 1000;
    const touchedPeak = host.memory().peak;
    const lastAnswer = performance.now();
    let open = (await worldsOpen(host)).open;
    const deadline = Date.now() + o.idleSeconds * 1000 + 60_000;
    while (open > 0) {
      if (Date.now() > deadline) throw new Error(`${open} worlds still open ${o.idleSeconds} s + 60 s after their last request`);
      await sleep(250);
      open = (await worldsOpen(host)).open;
    }
    const idleCloseSeconds = (performance.now() - lastAnswer) / 1000;
    const idleClosed = await memoryOf(host, open);
    log(`bench host: all closed ${idleCloseSeconds.toFixed(1)} s after the last answer; RSS ${idleClosed.rssMiB} MiB (${idleClosed.rssAfterGcMiB} MiB after a collection)`);
    await sleep(o.settleSeconds * 1000);
    const settled = await memoryOf(host, (await worldsOpen(host)).open);
    log(`bench host: ${o.settleSeconds} s later: RSS ${settled.rssMiB} MiB (${settled.rssAfterGcMiB} MiB after a collection)`);

    // Closed worlds: their first answer, then a second one warm.
    const cold: number[] = [];
    const warm: number[] = [];
    const samples = Math.min(o.cold, o.worlds);
    for (let i = 0; i < samples; i++) {
      const { world, customer } = made[i]!;
      cold.push(await timed(() => retrieveCustomer(world, customer)));
      warm.push(await timed(() => retrieveCustomer(world, customer)));
    }
    const coldMedian = median(cold);
    const warmMedian = median(warm);
    return {
      commands: { allOpen: allOpenCommand, idle: host.command },
      worlds: o.worlds,
      concurrency: o.concurrency,
      idleSeconds: o.idleSeconds,
      settleSeconds: o.settleSeconds,
      makeSeconds: round(makeSeconds, 2),
      perWorldMs: { median: round(median(perWorld)), p99: round(quantile(perWorld, 0.99)) },
      gcForced: allOpen.gc.collected,
      memory: { started: strip(started), allOpen: strip(allOpen), restarted: strip(restarted), touchedPeakMiB: round(MiB(touchedPeak), 1), idleClosed: strip(idleClosed), settled: strip(settled) },
      perOpenWorldMiB: allOpen.rssMiB === null || started.rssMiB === null ? null : round((allOpen.rssMiB - started.rssMiB) / o.worlds, 3),
      touchSeconds: round(touchSeconds, 2),
      idleCloseSeconds: round(idleCloseSeconds, 1),
      coldFirstMs: { median: round(coldMedian), p90: round(quantile(cold, 0.9)), max: round(quantile(cold, 1)) },
      warmMs: { median: round(warmMedian), p90: round(quantile(warm, 0.9)) },
      coldOverWarm: round(coldMedian / warmMedian, 2),
      samples,
    };
  } finally {
    await host.stop();
  }
}
