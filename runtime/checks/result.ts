/**
 * Reading what a check's guest answered. The answer comes out of untrusted code, so its shape
 * is checked before the runner believes it.
 */
import { KitError } from '../errors.js';

/** What one run of a check over one entry found. */
export interface CheckVerdict {
  pass: boolean;
  failures: string[];
}

/** The input of `__kit_check_run`: one entry of one twin. */
export interface CheckRunInput {
  entry: unknown;
  twin: string;
  world: string;
}

function parse(out: unknown, what: string): unknown {
  if (typeof out !== 'string') throw new KitError('invalid_check', `${what} answered no string`);
  try {
    return JSON.parse(out);
  } catch {
    throw new KitError('invalid_check', `${what} answered text that is not JSON`);
  }
}

/**
 * The check's name from `__kit_check_name()`'s answer (plain text). A module that exports no
 * usable check makes that call throw instead, with the reason, which the runner reports as
 * `invalid_check`.
 */
export function readCheckName(out: unknown): string {
  if (typeof out !== 'string' || out === '') throw new KitError('invalid_check', '__kit_check_name() answered no name');
  return out;
}

/** The verdict from `__kit_check_run()`'s answer; KitError `invalid_check` when it is malformed. */
export function readCheckVerdict(out: unknown): CheckVerdict {
  const v = parse(out, '__kit_check_run()') as { pass?: unknown; failures?: unknown } | null;
  if (!v || typeof v !== 'object' || typeof v.pass !== 'boolean' || !Array.isArray(v.failures) || !v.failures.every((f) => typeof f === 'string')) {
    throw new KitError('invalid_check', '__kit_check_run() answered a malformed verdict');
  }
  const failures = v.failures as string[];
  if (v.pass !== (failures.length === 0)) throw new KitError('invalid_check', '__kit_check_run() answered pass and failures that disagree');
  return { pass: v.pass, failures };
}

/** The input text for one `__kit_check_run` call. */
export function checkRunInput(input: CheckRunInput): string {
  return JSON.stringify(input);
}
