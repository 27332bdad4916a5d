/**
 * Test clocks: a frozen time that customers are made on. Advancing one moves its subscriptions
 * through what fell due (subscriptions.ts, `catchUp`) in a timed move just after the answer.
 */
import type { Move, Route, TwinContext } from '../../../../sdk/twin/types.js';
import { route, runMove } from '../lib/call.js';
import type { Call } from '../lib/request.js';
import { invalid } from '../errors.js';
import { event, insertWithEvent, saveWithEvent } from '../lib/events.js';
import { load, mustLoad, unlist } from '../lib/store.js';
import { is, listOf, newestWhere } from '../lib/lists.js';
import { clone, isObj, type Obj } from '../lib/util.js';
import { DAY, iso, at } from './billing_shared.js';
import { catchUp } from './subscriptions.js';

function createClock(c: Call): Obj {
  const frozen = c.p.reqInt('frozen_time');
  const clock: Obj = {
    id: c.ctx.id('clock_', 24), object: 'test_helpers.test_clock', created: c.now, deletes_after: c.now + 30 * DAY,
    frozen_time: frozen, livemode: false, name: c.p.nullableStr('name') ?? null, status: 'ready', status_details: {},
  };
  insertWithEvent(c, 'test_helpers.test_clock', clock, 'test_helpers.test_clock.created');
  return clock;
}

function advanceClock(c: Call): Obj {
  const id = c.req.params.id as string;
  const clock = clone(mustLoad(c, 'test_helpers.test_clock', id, 'test clock'));
  const target = c.p.reqInt('frozen_time');
  if (clock.status === 'advancing') throw invalid('This test clock is already advancing; wait until it is ready.', undefined, 'test_clock_advancing');
  if (target <= (clock.frozen_time as number)) {
    throw invalid('The frozen time must be after the test clock\'s current frozen time.', 'frozen_time');
  }
  clock.status = 'advancing';
  clock.status_details = { advancing: { target_frozen_time: target } };
  saveWithEvent(c, 'test_helpers.test_clock', clock, 'test_helpers.test_clock.advancing');
  // The clock moves in the twin's own time, just after this answer (the next request sees it ready).
  c.schedules.push({ id: `clock.${c.acct}.${id}`, move: 'advanceClock', dueAt: iso(c.now), data: { acct: c.acct, id, target } });
  return clock;
}

function finishClockAdvance(ctx: TwinContext, data: unknown): void {
  if (!isObj(data)) return;
  const { acct, id, target } = data as { acct: string; id: string; target: number };
  runMove(ctx, acct, ctx.nowMs(), (c) => {
    const clock = load(c, 'test_helpers.test_clock', id);
    if (clock === undefined) return;
    const cc = at(c, target);
    for (const rec of [...newestWhere(c, 'subscription', is('test_clock', id))]) catchUp(cc, rec.o.id as string, clock.frozen_time as number);
    const done = clone(clock);
    done.frozen_time = target;
    done.status = 'ready';
    done.status_details = {};
    saveWithEvent(c, 'test_helpers.test_clock', done, 'test_helpers.test_clock.ready');
  });
}

function deleteClock(c: Call): Obj {
  const id = c.req.params.id as string;
  const clock = mustLoad(c, 'test_helpers.test_clock', id, 'test clock');
  unlist(c, 'test_helpers.test_clock', id);
  event(c, 'test_helpers.test_clock.deleted', clock);
  return { id, object: 'test_helpers.test_clock', deleted: true };
}

export const testClockRoutes: Route[] = [
  route('test_helpers.test_clocks.create', 'POST', '/v1/test_helpers/test_clocks', createClock),
  route('test_helpers.test_clocks.list', 'GET', '/v1/test_helpers/test_clocks', (c) => listOf(c, 'test_helpers.test_clock', '/v1/test_helpers/test_clocks')),
  route('test_helpers.test_clocks.retrieve', 'GET', '/v1/test_helpers/test_clocks/:id', (c) => mustLoad(c, 'test_helpers.test_clock', c.req.params.id as string, 'test clock')),
  route('test_helpers.test_clocks.advance', 'POST', '/v1/test_helpers/test_clocks/:id/advance', advanceClock),
  route('test_helpers.test_clocks.del', 'DELETE', '/v1/test_helpers/test_clocks/:id', deleteClock),
];

export const testClockMoves = {
  advanceClock: (ctx, data) => finishClockAdvance(ctx, data),
} satisfies Record<string, Move>;
