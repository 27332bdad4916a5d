/**
 * A world's request budget: a token bucket that holds `size` requests and refills at
 * `size` per `windowMs`, so a burst of a whole window passes and the sustained rate is
 * `size / windowMs`. Spent, it answers how long until the next request would pass.
 */

export interface BudgetOptions {
  /** Requests the bucket holds (and refills per window). Default 100 000. */
  size?: number;
  /** Default 10 000 ms. */
  windowMs?: number;
  /** Epoch ms; injectable so tests never wait. */
  now?: () => number;
}

export const DEFAULT_BUDGET_SIZE = 100_000;
export const DEFAULT_BUDGET_WINDOW_MS = 10_000;

export class RequestBudget {
  readonly size: number;
  readonly windowMs: number;
  readonly #now: () => number;
  #tokens: number;
  #last: number;

  constructor(options: BudgetOptions = {}) {
    const size = options.size ?? DEFAULT_BUDGET_SIZE;
    const windowMs = options.windowMs ?? DEFAULT_BUDGET_WINDOW_MS;
    if (!Number.isFinite(size) || size < 1) throw new TypeError(`budget size must be at least 1, got ${size}`);
    if (!Number.isFinite(windowMs) || windowMs <= 0) throw new TypeError(`budget window must be positive, got ${windowMs}`);
    this.size = size;
    this.windowMs = windowMs;
    this.#now = options.now ?? Date.now;
    this.#tokens = size;
    this.#last = this.#now();
  }

  /** Spends one request. Returns 0 when it passes, else the ms until one would. */
  take(): number {
    const now = this.#now();
    const elapsed = now - this.#last;
    // A clock that steps back refills nothing rather than draining the bucket.
    if (elapsed > 0) {
      this.#tokens = Math.min(this.size, this.#tokens + (elapsed * this.size) / this.windowMs);
      this.#last = now;
    }
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.#tokens) * this.windowMs) / this.size);
  }
}

/** The `Retry-After` value (whole seconds, at least 1) for a wait in ms. */
export function retryAfterSeconds(waitMs: number): number {
  return Math.max(1, Math.ceil(waitMs / 1000));
}

/** Units a budget's window may be written in: `10s`, `1m`, `1h`. */
const WINDOW_UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000 };
const BUDGET_TEXT = /^([1-9][0-9]{0,11})\/([1-9][0-9]{0,5})?([smh])$/;

/**
 * A budget as a person writes it: `off`, or `<requests>/<window>` with the window in seconds,
 * minutes or hours (`100000/10s`, `600/m`). Throws a TypeError saying what is wrong.
 */
export function parseBudget(text: string): Required<Pick<BudgetOptions, 'size' | 'windowMs'>> | false {
  if (text === 'off') return false;
  const m = BUDGET_TEXT.exec(text);
  if (m === null) throw new TypeError(`a budget is "off" or <requests>/<window>, such as 100000/10s or 600/m; got "${text}"`);
  const windowMs = Number(m[2] ?? '1') * (WINDOW_UNITS[m[3] as string] as number);
  if (windowMs > 86_400_000) throw new TypeError(`a budget's window is at most a day (24h); got "${text}"`);
  return { size: Number(m[1]), windowMs };
}

/** How a budget reads back (`100000/10s`), for what a server prints. */
export function describeBudget(budget: { size: number; windowMs: number }): string {
  const { windowMs } = budget;
  const window = windowMs % 3_600_000 === 0 ? `${windowMs / 3_600_000}h` : windowMs % 60_000 === 0 ? `${windowMs / 60_000}m` : `${windowMs / 1000}s`;
  return `${budget.size}/${window}`;
}
