/**
 * A Durable Object's cold start on the edge variant (issue 32, "Measure"), with state persisted
 * (`startEdgeDev({ persist })`, as `kit edge dev --persist dir`):
 *
 * 1. After a restart (`EdgeDev.restart()`: workerd stopped and started again over the persisted
 *    state, as when Cloudflare has evicted every object), one at a time:
 *    - world A's first request (a Stripe retrieve): the Worker knows no family yet, so the index
 *      object starts and answers, then A's family object starts (its SQLite storage, the host's
 *      registry, pool and wake schedule) and opens the world;
 *    - world B's first request (B is its own family): the index is warm now; B's family starts;
 *    - A again, a few times: warm. The cold ones are reported against it, and the restart's own time.
 * 2. A fresh family: `POST /-/worlds` (a new family object made and the world created in it),
 *    then the world's first request (a Stripe create: the Worker asks the index where the world
 *    is, the family opens it), a second create and a retrieve (warm).
 *
 * Medians and p90 over the rounds; each cold figure against the warm one of the same run.
 */
import { createCustomer, createWorld, median, quantile, retrieveCustomer, round, timed } from '../host/client.js';
import { startEdge } from './servers.js';

export interface ColdOptions {
  /** The persist folder. */
  dir: string;
  restarts: number;
  fresh: number;
  /** Warm requests timed per restart. */
  warm: number;
}

export interface Spread {
  median: number | null;
  p90: number | null;
  min: number | null;
  max: number | null;
}

export interface ColdFigures {
  command: string;
  restarts: number;
  /** ms for `EdgeDev.restart()` itself (workerd stopped, started, listening; no object started yet). */
  restartMs: Spread;
  /** A's first retrieve after a restart: index + family object + world opened. */
  firstMs: Spread;
  /** B's first retrieve right after: its family object + world opened (the index warm). */
  otherFamilyMs: Spread;
  /** A's retrieve once warm. */
  warmMs: Spread;
  /** Medians: first / warm, other family / warm. */
  ratio: { first: number | null; otherFamily: number | null };
  fresh: {
    samples: number;
    /** `POST /-/worlds` of a bare world (a new family object). */
    postMs: Spread;
    /** The new world's first request, a Stripe create. */
    firstCreateMs: Spread;
    /** The next create (warm). */
    secondCreateMs: Spread;
    /** A retrieve after (warm). */
    retrieveMs: Spread;
    /** Medians: first create / second create. */
    ratio: number | null;
  };
}

function spread(xs: readonly number[]): Spread {
  return { median: round(median(xs)), p90: round(quantile(xs, 0.9)), min: round(Math.min(...xs)), max: round(Math.max(...xs)) };
}

export async function benchCold(o: ColdOptions, log: (line: string) => void): Promise<ColdFigures> {
  const edge = await startEdge(o.dir);
  try {
    const a = await createWorld(edge, 'bench', 'cold-a', ['stripe']);
    const b = await createWorld(edge, 'bench', 'cold-b', ['stripe']);
    const customerA = await createCustomer(a, 0);
    const customerB = await createCustomer(b, 0);
    await retrieveCustomer(a, customerA);
    await retrieveCustomer(b, customerB);

    const restartMs: number[] = [];
    const firstMs: number[] = [];
    const otherMs: number[] = [];
    const warmMs: number[] = [];
    for (let i = 0; i < o.restarts; i++) {
      restartMs.push(await edge.restart());
      firstMs.push(await timed(() => retrieveCustomer(a, customerA)));
      otherMs.push(await timed(() => retrieveCustomer(b, customerB)));
      const warm: number[] = [];
      for (let w = 0; w < o.warm; w++) warm.push(await timed(() => retrieveCustomer(a, customerA)));
      warmMs.push(median(warm));
      log(`bench edge: restart ${i + 1}/${o.restarts} in ${restartMs.at(-1)!.toFixed(0)} ms; A first ${firstMs.at(-1)!.toFixed(1)} ms, B first ${otherMs.at(-1)!.toFixed(1)} ms, A warm ${warmMs.at(-1)!.toFixed(2)} ms`);
    }

    const post: number[] = [];
    const firstCreate: number[] = [];
    const secondCreate: number[] = [];
    const retrieve: number[] = [];
    for (let i = 0; i < o.fresh; i++) {
      let world: Awaited<ReturnType<typeof createWorld>> | undefined;
      post.push(await timed(async () => void (world = await createWorld(edge, 'bench', `fresh-${i}`, ['stripe']))));
      let id = '';
      firstCreate.push(await timed(async () => void (id = await createCustomer(world!, 0))));
      secondCreate.push(await timed(() => createCustomer(world!, 1)));
      retrieve.push(await timed(() => retrieveCustomer(world!, id)));
    }
    log(`bench edge: fresh families: POST /-/worlds median ${median(post).toFixed(1)} ms; first create ${median(firstCreate).toFixed(1)} ms, second ${median(secondCreate).toFixed(1)} ms`);

    return {
      command: 'startEdgeDev({ port: 0, adminToken, persist: <dir> }) (as `kit edge dev --persist <dir>`); EdgeDev.restart() between rounds',
      restarts: o.restarts,
      restartMs: spread(restartMs),
      firstMs: spread(firstMs),
      otherFamilyMs: spread(otherMs),
      warmMs: spread(warmMs),
      ratio: { first: round(median(firstMs) / median(warmMs), 1), otherFamily: round(median(otherMs) / median(warmMs), 1) },
      fresh: {
        samples: o.fresh,
        postMs: spread(post),
        firstCreateMs: spread(firstCreate),
        secondCreateMs: spread(secondCreate),
        retrieveMs: spread(retrieve),
        ratio: round(median(firstCreate) / median(secondCreate), 2),
      },
    };
  } finally {
    await edge.close();
  }
}
