/**
 * A changeset and what hangs off it, as the world API answers them (docs/changesets.md). The
 * hash covers what a change does, never what became of it (states, receipts, verifications,
 * approvals), so reviewing and deploying a changeset never changes its hash.
 */

/** The vendor request that made a change, replayable against the root. */
export interface ChangeRequest {
  method: string;
  /** The vendor path below the twin (`/v1/products`, `/repos/acme/shop/labels`). */
  path: string;
  /** Raw, without `?`. */
  query: string;
  contentType: string | null;
  /**
   * The vendor's own headers the app sent (`stripe-version`, `stripe-account`,
   * `x-github-api-version`, `accept`, …): replayed on deploy so the root reads the request as
   * the twin did. Never credentials, cookies, twinkit's or the connection's (store.ts).
   */
  headers?: Record<string, string>;
  /** The request body as UTF-8 text; '' when none. */
  body: string;
}

/** One record a change wrote: its value before and after (null: absent, or deleted). */
export interface RecordChange {
  type: string;
  id: string;
  before: unknown;
  after: unknown;
}

export type ChangeState = 'landed' | 'deployed' | 'failed';

export interface Change {
  index: number;
  twin: string;
  request: ChangeRequest;
  /** The twin's answer status and body (ids in it are mapped to the root's on deploy). */
  status: number;
  answer: unknown;
  writes: RecordChange[];
  occurredAt: string;
  state: ChangeState;
  /** Where the change sits in this world's log (where it was cut, or where a push appended it). */
  position: number | null;
}

export interface Verification {
  hash: string;
  at: string;
  pass: boolean;
  /** How many checks ran over how many changes. */
  checks: number;
  changes: number;
  /** Failing verdicts only. */
  failures: { change: number; twin: string; check: string; failures: string[] }[];
}

export interface Approval {
  /** The world that signed, as its signature names it (a world may not know itself by its URL's name). */
  world: string;
  as: string;
  note: string | null;
  hash: string;
  at: string;
  /** Ed25519 over the canonical JSON of `{ world, changeset, hash, as, note, at }`, base64url. */
  signature: string;
  keyId: string;
}

export interface Receipt {
  change: number;
  twin: string;
  at: string;
  ok: boolean;
  status: number | null;
  request: { method: string; url: string };
  /** The twin's ids found in the change's answer, mapped to the root's. */
  ids: Record<string, string>;
  answer: unknown;
  error: string | null;
  idempotencyKey: string;
}

/** A changeset as stored. */
export interface StoredChangeset {
  name: string;
  message: string;
  cutAt: string;
  from: string;
  base: Record<string, number>;
  changes: Change[];
  contentHash: string;
  /** Cut in this world (pushed on by `origin push`), or landed here by a push. */
  origin: 'cut' | 'landed';
  landedAt: string | null;
  pushed: { to: string; at: string; receipts: Receipt[] } | null;
  verifications: Verification[];
  approvals: Approval[];
  receipts: Receipt[];
  /** Order of cutting or landing (newest last). */
  seq: number;
}

export type DeployedState = 'none' | 'partial' | 'all';
