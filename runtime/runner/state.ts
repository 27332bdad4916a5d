/**
 * A runner's own keys in the world's storage, `['#runner', <world name>, …]` (scenarios,
 * checks, the webhook outbox), for a host that makes and removes worlds: a branch starts with
 * its parent's scenarios and checks, and a removed world leaves none of its own behind for a
 * later world of the same name.
 */
import type { Key, Storage } from '../store/index.js';
import { prefixEnd } from '../store/keys.js';

/** Where the scenario in force on a twin is kept (scenarios.ts): its `StoredScenario`. */
export function scenarioKey(world: string, vendor: string): Key {
  return ['#runner', world, 'scenario', vendor];
}

/** What a branch takes from its parent: the behaviour set on it, not its deliveries. */
const INHERITED = ['scenario', 'check'] as const;

/** Copies `from`'s scenarios and checks to `to` (in the caller's turn; bounded: ≤ one per twin, ≤ 100 checks). */
export function copyRunnerState(storage: Storage, from: string, to: string): void {
  storage.transact((tx) => {
    for (const kind of INHERITED) {
      const prefix: Key = ['#runner', from, kind];
      for (const { key, value } of storage.range({ start: prefix, end: prefixEnd(prefix) })) tx.put(['#runner', to, ...key.slice(2)], value);
    }
  });
}

/** Removes every key the runner kept for world `name`. */
export function removeRunnerState(storage: Storage, name: string): void {
  const prefix: Key = ['#runner', name];
  const keys = [...storage.range({ start: prefix, end: prefixEnd(prefix) })].map((kv) => kv.key);
  if (keys.length === 0) return;
  storage.transact((tx) => {
    for (const key of keys) tx.remove(key);
  });
}

/** Whether the runner of world `name` left webhook deliveries to send. */
export function hasPendingDeliveries(storage: Storage, name: string): boolean {
  const prefix: Key = ['#runner', name, 'outbox'];
  for (const _ of storage.range({ start: prefix, end: prefixEnd(prefix), limit: 1 })) return true;
  return false;
}

/**
 * When the earliest webhook delivery attempt the runner of world `name` left falls due (epoch
 * ms), or null when it left none: a host that closed the world wakes it then. One read per
 * delivery in the outbox. An attempt that was in flight when the world closed is due at once
 * (its time is past).
 */
export function nextDeliveryMs(storage: Storage, name: string): number | null {
  const prefix: Key = ['#runner', name, 'outbox'];
  let earliest = Infinity;
  for (const { value } of storage.range<{ nextAt?: unknown }>({ start: prefix, end: prefixEnd(prefix) })) {
    const at = typeof value?.nextAt === 'number' && Number.isFinite(value.nextAt) ? value.nextAt : 0;
    if (at < earliest) earliest = at;
  }
  return earliest === Infinity ? null : earliest;
}
