/**
 * One `postMessage` per event-loop turn: what is queued during a turn goes out together at
 * `setImmediate`, each item with its own transfer list. If the batch cannot be cloned, each
 * item is sent alone so that only the one at fault fails (`onRefused`). When nothing was
 * sent for `MAX_HOLD_MS`, an item goes at once: the first request after a pause waits for
 * no batch, and a turn busy with slow calls sends each answer as it comes, so the
 * watchdog, which counts the time since the last answer, sees the progress.
 */
import type { TransferListItem } from 'node:worker_threads';

const MAX_HOLD_MS = 10;

interface Port {
  postMessage(message: unknown, transfer?: readonly TransferListItem[]): void;
}

export class TurnBatcher<T> {
  #items: T[] = [];
  #transfers: (readonly TransferListItem[] | undefined)[] = [];
  #scheduled = false;
  /** When the last batch was sent. */
  #sentAt = -Infinity;

  constructor(
    private readonly port: () => Port | undefined,
    private readonly onRefused: (item: T, error: unknown) => void,
  ) {}

  push(item: T, transfer?: readonly TransferListItem[]): void {
    this.#items.push(item);
    this.#transfers.push(transfer);
    if (performance.now() - this.#sentAt >= MAX_HOLD_MS) this.flush();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => {
        this.#scheduled = false;
        this.flush();
      });
    }
  }

  /** Drops what waits (its senders are told otherwise, e.g. the worker ended). */
  clear(): void {
    this.#items = [];
    this.#transfers = [];
  }

  flush(): void {
    const items = this.#items;
    const transfers = this.#transfers;
    this.clear();
    const port = this.port();
    if (items.length === 0 || port === undefined) return;
    this.#sentAt = performance.now();
    const all = transfers.some((t) => t !== undefined && t.length > 0) ? transfers.flatMap((t) => t ?? []) : undefined;
    try {
      port.postMessage(items, all);
      return;
    } catch {
      // Cloning failed before anything was sent or transferred: send one at a time.
    }
    items.forEach((item, i) => {
      try {
        port.postMessage([item], transfers[i]);
      } catch (e) {
        this.onRefused(item, e);
      }
    });
  }
}
