/**
 * Memory per idle world on the edge variant (issue 32, "Measure"): the resident set of the
 * workerd process (miniflare's child; /proc/<pid>/status) as worlds are made, each a bare world
 * (so each its own family object) made with `POST /-/worlds` and touched once (a Stripe create),
 * `concurrency` at a time; state in miniflare's temporary folder, as `kit edge dev` keeps it without `--persist`.
 *
 * Readings: workerd just started; after `GET /-/ping` (the Worker and the index loaded: the
 * baseline, RSS_0); after each step of worlds (all of them open in their families, 2 s after the
 * last); then, with no request at all, every `sampleEvery` seconds for `idle` seconds: a family
 * closes a world after 60 s without a request (host/multi-world/pool.ts), and workerd evicts an
 * object left alone for somewhere between 80 and 160 s (`profile.js evictions` shows it: the
 * family's constructor runs again on the next request). Per world: (RSS_n − RSS_0) / n. workerd's V8 heap cannot be collected on
 * demand from here (no inspector in `kit edge dev`), so every reading includes garbage not yet
 * collected.
 *
 * After the idle readings, `probe` worlds are asked, one request each: their live row (`GET
 * /-/worlds/<name>`: is the world still open in its family?), then a Stripe retrieve of what the
 * touch made (the first after idle) and another (warm).
 */
import { createCustomer, createWorld, expectJson, inParallel, median, MiB, retrieveCustomer, round, timed, type MadeWorld } from '../host/client.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { startEdge, type ProcessMemory } from './servers.js';

export interface MemoryOptions {
  /** The steps: worlds made in all, ascending (e.g. 100, 500). */
  steps: number[];
  concurrency: number;
  /** Seconds without a request after the last step. */
  idle: number;
  /** Seconds between readings while idle. */
  sampleEvery: number;
  /** Worlds probed after the idle wait. */
  probe: number;
}

export interface MemoryReading {
  what: string;
  /** Worlds made so far. */
  worlds: number;
  /** Seconds since the last request (idle readings). */
  idleSeconds: number | null;
  rssMiB: number | null;
  anonMiB: number | null;
  fileMiB: number | null;
  peakMiB: number | null;
  /** (RSS − RSS_0) / worlds, in KiB (null at 0 worlds). */
  perWorldKiB: number | null;
  anonPerWorldKiB: number | null;
}

export interface MemoryFigures {
  command: string;
  steps: number[];
  concurrency: number;
  idle: number;
  /** Seconds to make (and touch) each step's worlds; the median ms per world (POST /-/worlds + a create). */
  make: { worlds: number; seconds: number | null; perWorldMs: number | null }[];
  readings: MemoryReading[];
  /** The probed worlds after the idle wait. */
  probe: {
    worlds: number;
    /** How many still open in their family. */
    open: number;
    /** The first Stripe retrieve after the idle wait, and the next (warm): medians. */
    firstMs: number | null;
    warmMs: number | null;
    ratio: number | null;
  };
}

const KiB = (bytes: number): number => bytes / 1024;

export async function benchMemory(o: MemoryOptions, log: (line: string) => void): Promise<MemoryFigures> {
  const edge = await startEdge();
  try {
    const readings: MemoryReading[] = [];
    let base: ProcessMemory | undefined;
    const read = (what: string, worlds: number, idleSeconds: number | null): MemoryReading => {
      const m = edge.memory();
      const per = (x: number, x0: number | undefined): number | null => (worlds === 0 || x0 === undefined ? null : round(KiB(x - x0) / worlds, 1));
      const reading = {
        what,
        worlds,
        idleSeconds,
        rssMiB: round(MiB(m.rss), 1),
        anonMiB: round(MiB(m.anon), 1),
        fileMiB: round(MiB(m.file), 1),
        peakMiB: round(MiB(m.peak), 1),
        perWorldKiB: per(m.rss, base?.rss),
        anonPerWorldKiB: per(m.anon, base?.anon),
      };
      readings.push(reading);
      log(`bench edge: memory, ${what}: workerd RSS ${MiB(m.rss).toFixed(1)} MiB (anon ${MiB(m.anon).toFixed(1)})${reading.perWorldKiB === null ? '' : `, ${reading.perWorldKiB} KiB per world`}`);
      return reading;
    };
    read('workerd started, no request yet', 0, null);
    await expectJson(await fetch(`${edge.url}/-/ping`), 200, 'GET /-/ping');
    await sleep(1000);
    base = edge.memory();
    read('after GET /-/ping (the Worker and the index loaded): RSS_0', 0, null);

    const worlds: { world: MadeWorld; customer: string }[] = [];
    const make: MemoryFigures['make'] = [];
    let lastRequest = Date.now();
    for (const step of o.steps) {
      const from = worlds.length;
      const started = performance.now();
      const took = await inParallel(step - from, o.concurrency, async (i) => {
        let made: { world: MadeWorld; customer: string } | undefined;
        const ms = await timed(async () => {
          const world = await createWorld(edge, 'bench', `idle-${from + i}`, ['stripe']);
          made = { world, customer: await createCustomer(world, 0) };
        });
        worlds[from + i] = made!;
        return ms;
      });
      lastRequest = Date.now();
      make.push({ worlds: step, seconds: round((performance.now() - started) / 1000, 1), perWorldMs: round(median(took), 1) });
      await sleep(2000);
      read(`${step} worlds made, each touched once (all open)`, step, null);
    }

    const total = worlds.length;
    for (let s = o.sampleEvery; ; s += o.sampleEvery) {
      const at = lastRequest + Math.min(s, o.idle) * 1000;
      await sleep(Math.max(0, at - Date.now()));
      read(`idle ${Math.min(s, o.idle)} s`, total, Math.round((Date.now() - lastRequest) / 1000));
      if (s >= o.idle) break;
    }

    // Spread over the worlds made, the first ones (idle longest) first.
    const probed = Array.from({ length: Math.min(o.probe, total) }, (_, i) => worlds[Math.floor((i * total) / Math.min(o.probe, total))]!);
    let open = 0;
    const first: number[] = [];
    const warm: number[] = [];
    for (const { world, customer } of probed) {
      const row = await expectJson<{ open: boolean }>(await fetch(`${edge.url}/-/worlds/${world.name}`, { headers: { 'x-kit-token': edge.admin } }), 200, `GET /-/worlds/${world.name}`);
      if (row.open) open++;
      first.push(await timed(() => retrieveCustomer(world, customer)));
      warm.push(await timed(() => retrieveCustomer(world, customer)));
    }
    log(`bench edge: after ${o.idle} s idle, ${open} of ${probed.length} probed worlds open; first retrieve ${median(first).toFixed(1)} ms, warm ${median(warm).toFixed(1)} ms`);

    return {
      command: 'startEdgeDev({ port: 0, adminToken }) (as `kit edge dev`, no --persist: state in a temporary folder miniflare removes at stop)',
      steps: o.steps,
      concurrency: o.concurrency,
      idle: o.idle,
      make,
      readings,
      probe: { worlds: probed.length, open, firstMs: round(median(first)), warmMs: round(median(warm)), ratio: round(median(first) / median(warm), 1) },
    };
  } finally {
    await edge.close();
  }
}
