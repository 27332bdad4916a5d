/**
 * The unmatched-requests journal of one twin: the requests no handler took, oldest first,
 * the last `MAX_UNMATCHED` of them, with a count of all. A scenario in force keeps one (its
 * `ScenarioState`); with none in force the runner keeps one per twin for the requests none of
 * the twin's own routes took. Like WireMock's unmatched-requests journal, it is bounded: each
 * entry's path and query are clipped, and the list drops its oldest entry past the cap.
 */

import { setOwn } from '../router/query.js';
import { DEFAULT_STATE } from './parse.js';
import type { ScenarioReport, ScenarioRequest, UnmatchedRequest } from './types.js';

export const MAX_UNMATCHED = 100;
/** How much of a request's path and of its query (names and values together) an entry keeps. */
export const MAX_REPORTED_PATH = 2048;
export const MAX_REPORTED_QUERY = 2048;

export class UnmatchedJournal {
  private readonly entries: UnmatchedRequest[] = [];
  private total = 0;

  /** Adds a request; the oldest entry goes once there are more than `MAX_UNMATCHED`. */
  push(req: ScenarioRequest, scenario: UnmatchedRequest['scenario'], twin: UnmatchedRequest['twin'] = null): void {
    this.total++;
    this.entries.push({
      requestId: req.id,
      at: req.at ?? null,
      method: req.method.slice(0, 32),
      path: clipText(req.path, MAX_REPORTED_PATH),
      query: clippedQuery(req.query),
      scenario,
      twin,
    });
    if (this.entries.length > MAX_UNMATCHED) this.entries.shift();
  }

  /** The newest entry for a request id, to add the twin's side to (newest first: it was just pushed). */
  find(requestId: string): UnmatchedRequest | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const u = this.entries[i] as UnmatchedRequest;
      if (u.requestId === requestId) return u;
    }
    return undefined;
  }

  /** A copy: whoever holds it cannot change the journal through it. */
  list(): { unmatched: UnmatchedRequest[]; unmatchedTotal: number } {
    return structuredClone({ unmatched: this.entries, unmatchedTotal: this.total });
  }

  /** The report of a twin with no scenario in force: no handlers, and what its routes did not take. */
  plainReport(): ScenarioReport {
    return { state: DEFAULT_STATE, initialState: DEFAULT_STATE, handlers: [], ...this.list() };
  }
}

function clipText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** The query with names and values kept up to `MAX_REPORTED_QUERY` characters in all, in order. */
function clippedQuery(query: Record<string, string | string[]>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  let left = MAX_REPORTED_QUERY;
  for (const [name, value] of Object.entries(query)) {
    if (left <= 0) break;
    const key = clipText(name, left);
    left -= key.length;
    if (Array.isArray(value)) {
      const kept: string[] = [];
      for (const v of value) {
        if (left <= 0) break;
        const c = clipText(v, Math.max(left, 0));
        kept.push(c);
        left -= c.length;
      }
      setOwn(out, key, kept);
    } else {
      const c = clipText(value, Math.max(left, 0));
      setOwn(out, key, c);
      left -= c.length;
    }
  }
  return out;
}
