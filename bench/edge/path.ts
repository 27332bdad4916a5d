/**
 * What the Worker and the index add to a request on the edge variant: four requests, one at a
 * time, interleaved, `samples` of each (as `kit edge dev` without `--persist`):
 *
 * - the floor: a Worker answering `Hello World!` in another workerd through miniflare;
 * - the Worker alone: `GET /-/worlds` without a credential, answered 401 by the Worker's own
 *   admin surface (no object asked);
 * - the Worker and the index: a Stripe request to a world nobody made, answered 404 by the
 *   Worker once the index says no family holds it (a name the index does not know is never
 *   cached, so every one asks it: what a known world's first request through a Worker pays);
 * - a world's warm Stripe retrieve: the Worker has its family cached, the family has it open.
 *
 * The Worker's own cost above the floor is the second minus the first; the index's share of a
 * world's first request, the third minus the second; a world's answer past the Worker, the
 * fourth minus the second. (A request to a world the Worker has not seen yet cannot be
 * timed apart from its world's opening: the Worker forgets its cache only when workerd restarts,
 * which is the cold start, cold.ts.)
 */
import { createCustomer, createWorld, expectJson, median, quantile, retrieveCustomer, round, timed, vendorHeaders } from '../host/client.js';
import { startEdge, startWorkerdHello } from './servers.js';

export interface PathOptions {
  samples: number;
}

export interface PathRow {
  id: 'hello' | 'worker' | 'index' | 'world';
  what: string;
  status: number;
  medianMs: number | null;
  p90Ms: number | null;
}

export interface PathFigures {
  samples: number;
  rows: PathRow[];
  /** Medians: Worker alone − floor, index − Worker alone (the index's round trip), world − Worker alone. */
  workerMs: number | null;
  indexMs: number | null;
  pastWorkerMs: number | null;
  /** The index's round trip / the warm retrieve. */
  indexOverWarm: number | null;
}

export async function benchPath(o: PathOptions, log: (line: string) => void): Promise<PathFigures> {
  const edge = await startEdge();
  const hello = await startWorkerdHello().catch(async (e: unknown) => {
    await edge.close();
    throw e;
  });
  try {
    const world = await createWorld(edge, 'bench', 'path', ['stripe']);
    const customer = await createCustomer(world, 0);
    const requests: { id: PathRow['id']; what: string; status: number; send: () => Promise<void> }[] = [
      {
        id: 'hello',
        what: 'the floor: a Worker answering Hello World! (another workerd through miniflare)',
        status: 200,
        send: async () => {
          const response = await fetch(`${hello.url}/`);
          if ((await response.text()) !== 'Hello World!') throw new Error(`the hello Worker answered ${response.status}`);
        },
      },
      {
        id: 'worker',
        what: 'the Worker alone: GET /-/worlds without a credential (401)',
        status: 401,
        send: async () => void (await expectJson(await fetch(`${edge.url}/-/worlds`), 401, 'GET /-/worlds without a credential')),
      },
      {
        id: 'index',
        what: 'the Worker and the index: a Stripe retrieve in a world nobody made (404 after the index)',
        status: 404,
        send: async () => void (await expectJson(await fetch(`${edge.url}/bench/nobody/stripe/v1/customers/${customer}`, { headers: vendorHeaders(world.token) }), 404, 'a world nobody made')),
      },
      {
        id: 'world',
        what: "a world's warm Stripe retrieve (the family cached by the Worker, the world open)",
        status: 200,
        send: () => retrieveCustomer(world, customer),
      },
    ];
    for (const r of requests) for (let i = 0; i < 5; i++) await r.send(); // warm-up
    const took = new Map<PathRow['id'], number[]>(requests.map((r) => [r.id, []]));
    for (let i = 0; i < o.samples; i++) for (const r of requests) took.get(r.id)!.push(await timed(r.send));
    const rows = requests.map((r): PathRow => ({ id: r.id, what: r.what, status: r.status, medianMs: round(median(took.get(r.id)!), 3), p90Ms: round(quantile(took.get(r.id)!, 0.9), 3) }));
    const m = (id: PathRow['id']): number => median(took.get(id)!);
    log(`bench edge: path: floor ${m('hello').toFixed(2)} ms, Worker alone ${m('worker').toFixed(2)} ms, Worker + index ${m('index').toFixed(2)} ms, warm retrieve ${m('world').toFixed(2)} ms (medians of ${o.samples})`);
    return {
      samples: o.samples,
      rows,
      workerMs: round(m('worker') - m('hello'), 3),
      indexMs: round(m('index') - m('worker'), 3),
      pastWorkerMs: round(m('world') - m('worker'), 3),
      indexOverWarm: round((m('index') - m('worker')) / m('world'), 2),
    };
  } finally {
    await hello.close();
    await edge.close();
  }
}
