/**
 * Lets a timer not keep the process alive, where timers can (Node's are objects with `unref`;
 * workerd's are numbers, and a Durable Object lives by its own rules).
 */
export function unrefTimer(timer: unknown): void {
  (timer as { unref?: () => void } | null)?.unref?.();
}
