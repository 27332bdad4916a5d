/**
 * What crosses a Durable Object's RPC: workerd passes a thrown error's message but not its class
 * or fields, so an object answers `{ ok }` or the coded error's body and status, and the caller
 * throws it again as the same code.
 */
import { CodedError, isCodedError, KitError } from '../../runtime/errors.js';

export type Outcome<T> = { ok: T } | { failed: { status: number; code: string; message: string; details: Record<string, unknown> } };

/** Runs `work`, answering its result or its coded error (anything else is logged and `internal`). */
export async function outcomeOf<T>(work: () => T | Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: await work() };
  } catch (e) {
    const coded = isCodedError(e) ? e : new KitError('internal', 'the edge failed on this request');
    if (!isCodedError(e)) console.error('kit edge: a call failed:', e);
    const { code, message, ...details } = coded.toBody().error;
    return { failed: { status: coded.status, code, message, details } };
  }
}

/** The value of an outcome, or its error thrown again with its code and status. */
export function unwrap<T>(outcome: Outcome<T>): T {
  if ('ok' in outcome) return outcome.ok;
  const { status, code, message, details } = outcome.failed;
  throw new CodedError(code, status, message, details);
}
