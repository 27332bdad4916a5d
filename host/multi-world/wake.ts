/**
 * When closed worlds must open again by themselves: a world whose clock is not set has timed
 * moves that fall due by the wall clock (a subscription renews, a greeting expires) with no
 * request to perform them. When such a world closes, its earliest move's instant is noted
 * here, in storage (so a restarted host keeps it):
 *   ['#host', 'wake', <name>]          → epoch ms
 *   ['#host', 'due', <epoch ms>, <name>] → null      the same, in the order they fall due
 * One timer waits for the earliest; then the world is opened, performs what fell due (its
 * webhooks go out as from an open world), and closes again once idle, noting its next one.
 */
import type { Key, Storage } from '../../runtime/store/index.js';
import { prefixEnd } from '../../runtime/store/keys.js';
import { unrefTimer } from '../../runtime/timers.js';

const WAKE: Key = ['#host', 'wake'];
const DUE: Key = ['#host', 'due'];
/** Timers are set at most this far ahead (Node's timers overflow past 2^31 ms). */
const MAX_TIMER_MS = 60 * 60 * 1000;

export class WakeSchedule {
  readonly #storage: Storage;
  readonly #wake: (name: string) => Promise<void>;
  readonly #now: () => number;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #timerAt = Infinity;
  #stopped = false;
  #running = false;

  /** `wake(name)` opens the world and performs its due moves. */
  constructor(storage: Storage, wake: (name: string) => Promise<void>, now: () => number = Date.now) {
    this.#storage = storage;
    this.#wake = wake;
    this.#now = now;
  }

  /** Starts the timer for what is already noted (a restarted host). */
  start(): void {
    this.#arm();
  }

  /** Notes when `name` must wake (null: never), replacing what was noted. */
  note(name: string, atMs: number | null): void {
    const before = this.#storage.get<number>([...WAKE, name]);
    if ((before ?? null) === atMs) return;
    this.#storage.transact((tx) => {
      if (before !== undefined) tx.remove([...DUE, before, name]);
      if (atMs === null) tx.remove([...WAKE, name]);
      else {
        tx.put([...WAKE, name], atMs);
        tx.put([...DUE, atMs, name], null);
      }
    });
    this.#arm();
  }

  forget(name: string): void {
    this.note(name, null);
  }

  /** The earliest noted wake-up: [ms, name], or undefined. */
  next(): [number, string] | undefined {
    for (const { key } of this.#storage.range({ start: DUE, end: prefixEnd(DUE), limit: 1 })) return [key[2] as number, key[3] as string];
    return undefined;
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #arm(): void {
    if (this.#stopped || this.#running) return;
    const first = this.next();
    const at = first === undefined ? Infinity : Math.min(first[0], this.#now() + MAX_TIMER_MS);
    if (at === this.#timerAt && this.#timer !== null) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#timerAt = at;
    if (at === Infinity) return;
    this.#timer = setTimeout(() => void this.#fire(), Math.max(0, at - this.#now()));
    unrefTimer(this.#timer);
  }

  /** Wakes every world whose noted instant has come (what the timer does; an edge alarm calls it too). */
  async runDue(): Promise<void> {
    if (this.#running) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    await this.#fire();
  }

  async #fire(): Promise<void> {
    this.#timer = null;
    this.#timerAt = Infinity;
    this.#running = true;
    try {
      for (;;) {
        if (this.#stopped) return;
        const first = this.next();
        if (first === undefined || first[0] > this.#now()) break;
        const [, name] = first;
        // Forgotten before it runs: the world notes its next one when it closes again.
        this.note(name, null);
        try {
          await this.#wake(name);
        } catch (e) {
          console.error(`kit host: waking ${name} for its timed moves failed:`, e);
        }
      }
    } finally {
      this.#running = false;
      this.#arm();
    }
  }
}
