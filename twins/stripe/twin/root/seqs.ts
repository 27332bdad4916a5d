/**
 * The seqs of copied objects (lib/store.ts keeps every object under a creation sequence number
 * `s`, and a copy's lists run in its order: `AccountState.copy`). A copy has no creation
 * order of its own, only the root's: Stripe lists newest first, and an object's `created`. So a
 * copied object's seq is at most `created × 16 + 15`, and each one a walk of a list finds is
 * below the one before it (the same second holds up to 16 before it spills into the seconds
 * before, which only the objects after it in the walk use). An object copied before keeps its
 * seq. When no such seq is free (an object new to the copy found between two it had, or in a
 * second whose seqs are taken), the run of new objects takes seqs above all the account has,
 * from its floor, newest highest; and the floor is raised above every seq a copy takes, so
 * what the app makes in the copy afterwards is listed as newer than what the root showed.
 * Seqs stay below 62⁶ (the six base-62 digits an ordered event id begins with) until 2080.
 */
import type { Call } from '../lib/request.js';
import { raiseSeqFloor, type Rec } from '../lib/store.js';
import { SEQS_PER_ENTRY, accountState } from '../lib/account.js';
import { pad } from '../lib/ids.js';
import type { Obj } from '../lib/util.js';

const PER_SECOND = 16;
/** The latest `created` whose seqs the twin's ordered ids can still follow (the year 2080). */
const LATEST_CREATED = 3_500_000_000;

/** The highest seq an object created at its `created` may take, if it has a usable one. */
function topSeq(o: Obj): number | undefined {
  const t = o.created;
  return typeof t === 'number' && Number.isSafeInteger(t) && t >= 0 && t <= LATEST_CREATED ? t * PER_SECOND + PER_SECOND - 1 : undefined;
}

/** Whether an object of the account's `type` holds seq `s` (a copy lists every type but events through `ix.`). */
function taken(c: Call, type: string, s: number): boolean {
  return c.tree.get<unknown>(`ix.${type}.${c.acct}`, pad(s)) !== undefined;
}

/**
 * The seqs of a page of objects of `type`, newest first as the root listed them; `stored`:
 * each one's record, when the copy has it. `above`: the seq of the object before the page in
 * the walk (none for the first page, or for a webhook's one object).
 */
export function seqsOf(c: Call, type: string, objects: readonly Obj[], stored: readonly (Rec | undefined)[], above: number | undefined): number[] {
  const seqs = stored.map((rec) => rec?.s);
  for (let first = 0; first < objects.length; first++) {
    if (seqs[first] !== undefined) continue;
    let last = first;
    while (last + 1 < objects.length && seqs[last + 1] === undefined) last++;
    const upper = first === 0 ? above : seqs[first - 1];
    const lower = last + 1 < objects.length ? seqs[last + 1] : undefined;
    const run = byCreated(c, type, objects.slice(first, last + 1), upper, lower) ?? fromFloor(c, last - first + 1);
    run.forEach((s, i) => { seqs[first + i] = s; });
    raiseSeqFloor(c, run[0] as number);
    first = last;
  }
  return seqs as number[];
}

/** Seqs from `created` for a run of new objects between the seqs `upper` and `lower`, falling; undefined when they do not fit. */
function byCreated(c: Call, type: string, run: readonly Obj[], upper: number | undefined, lower: number | undefined): number[] | undefined {
  const out: number[] = [];
  let below = upper ?? Infinity;
  for (const o of run) {
    const top = topSeq(o);
    if (top === undefined) return undefined;
    const s = Math.min(top, below - 1);
    if (s < 0 || (lower !== undefined && s <= lower) || taken(c, type, s)) return undefined;
    out.push(s);
    below = s;
  }
  return out;
}

/**
 * `count` seqs above every seq of the account, falling (the run's newest highest): above its
 * floor, and above what the entries before this one handed out without raising it (account.ts,
 * `nextSeq`).
 */
function fromFloor(c: Call, count: number): number[] {
  const floor = Math.max(accountState(c).n, (c.ctx.position + 1) * SEQS_PER_ENTRY);
  const out: number[] = [];
  for (let i = count; i >= 1; i--) out.push(floor + i);
  return out;
}
