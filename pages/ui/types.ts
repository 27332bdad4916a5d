/**
 * The world API's answers as pages read them (spec "Other records"; runtime/runner/api.ts).
 * Written here rather than imported: pages import nothing from runtime/.
 */

export interface Clock {
  /** ISO instant every twin stamps from; the wall clock's now when not set. */
  at: string;
  /** Set: it moves only when set or advanced. */
  frozen: boolean;
}

export interface WorldMap {
  twins: { twin: string; position: number; mirror: string | null; root: unknown; resources: { type: string; count: number }[] }[];
}

export type EntryCause =
  | { kind: 'request'; method: string; route: string; path: string; status: number; requestId: string }
  | { kind: 'move'; move: string; dueAt: string }
  | { kind: 'ingest'; source: string }
  | { kind: 'refresh' }
  | { kind: 'push'; changeset: string; change: number; method: string; route: string; path: string; status: number }
  | { kind: 'pull'; origin: string; through: number; merged: boolean }
  | { kind: 'system'; reason: string };

export interface Entry {
  position: number;
  occurredAt: string;
  cause: EntryCause;
  writes: { type: string; id: string; value: unknown }[];
  events?: { type: string; data: unknown }[];
  /** The W3C `traceparent` of the request that caused it. */
  traceparent?: string;
}

export interface TimelineItem {
  twin: string;
  position: number;
  entry: Entry;
}

export interface TimelinePage {
  entries: TimelineItem[];
  /** The `before` cursor of the following page; null on the last. */
  next: string | null;
}

/** `GET …/branches` lists these. */
export interface Branch {
  /** `org/world` of the branch. */
  name: string;
  from: string;
  at: string;
  createdAt: string;
  expiresAt: string | null;
}

/** `POST …/branches` answers this (the tokens once). */
export interface BranchMade {
  name: string;
  token: string;
  readToken: string;
  expiresAt: string | null;
}

/** One named key as `GET …/keys` lists it (never its value). */
export interface NamedKey {
  id: string;
  name: string;
  scope: 'read' | 'write';
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  for: string | null;
  createdBy: string | null;
}

/** `POST …/keys` answers the key's value once. */
export interface NamedKeyMade extends NamedKey {
  key: string;
}

export interface CheckRow {
  name: string;
  /** The name the check's code declares. */
  declared: string;
  updatedAt: string;
  bytes: number;
}

/** `GET …/twins`: each twin as its status endpoint answers. */
export interface TwinStatus {
  vendor: string;
  version: string;
  protocol: string;
  root: unknown;
  position: number;
  scenario: { handlers: number; updatedAt: string } | null;
  /** A scenario kept in a file of the app's (a world file's `scenario:`), and why its last edit is not in force. */
  scenarioFile?: { path: string; problem: { message: string; line?: number } | null };
  /** Where the twin's code came from; a twin built from sources has its last build. */
  source?: {
    kind: 'builtin' | 'path' | 'component' | 'installed';
    path?: string;
    build?: { ok: boolean; at: string; error?: { message: string; file?: string; line?: number; column?: number } };
  };
  resources?: { type: string; count: number }[];
}

export interface TwinRequestReport {
  twin: string;
  total: number;
  byStatusClass: Record<string, number>;
  p50Ms: number | null;
  p95Ms: number | null;
  topRoutes: { route: string; count: number }[];
}

export interface RequestReport {
  since: string;
  hours: number;
  twins: TwinRequestReport[];
}

/** A vendor request a change replays (`POST /v1/products`), as `GET …/changesets` answers it. */
export interface ChangeRequest {
  method: string;
  /** The vendor path below the twin (`/v1/products`). */
  path: string;
  /** Raw, no `?`. */
  query: string;
  contentType: string | null;
  body: string;
}

/** One record a change wrote; `before`/`after` null: absent (made) or deleted. */
export interface RecordChange {
  type: string;
  id: string;
  before: unknown;
  after: unknown;
}

export interface Change {
  /** 0-based within the changeset. */
  index: number;
  twin: string;
  request: ChangeRequest;
  /** The twin's answer status. */
  status: number;
  answer: unknown;
  writes: RecordChange[];
  occurredAt: string;
  state: 'landed' | 'deployed' | 'failed';
  /** Where it sits in this world's log. */
  position: number | null;
}

/** A run of the world's checks over a changeset's changes; `failures` holds the failing verdicts only. */
export interface Verification {
  hash: string;
  at: string;
  pass: boolean;
  /** How many checks ran, over how many changes. */
  checks: number;
  changes: number;
  /** Made on the changeset's current hash (else on an earlier version). */
  current: boolean;
  failures: { change: number; twin: string; check: string; failures: string[] }[];
}

export interface Approval {
  as: string;
  note: string | null;
  hash: string;
  at: string;
  signature: string;
  keyId: string;
  current: boolean;
}

/** What deploying one change did at the root. */
export interface Receipt {
  change: number;
  twin: string;
  at: string;
  ok: boolean;
  status: number | null;
  request: { method: string; url: string };
  /** Twin id → real id, found in the root's answer. */
  ids: Record<string, string>;
  answer: unknown;
  error: string | null;
  idempotencyKey: string;
}

/** What a changeset and a row of the list both answer (docs/changesets.md). */
interface ChangesetStanding {
  name: string;
  message: string;
  cutAt: string;
  /** The world it was cut in. */
  from: string;
  base: Record<string, number>;
  contentHash: string;
  /** The hash of the body as it stands: not `contentHash` when it was changed outside the world. */
  currentHash: string;
  /** Cut in this world (else landed here by a push). */
  cut: boolean;
  landedAt: string | null;
  pushed: { to: string; at: string } | null;
  verification: Verification | null;
  verifications: Verification[];
  approvals: Approval[];
  deployed: 'none' | 'partial' | 'all';
}

/** A changeset as `GET …/changesets/<name>` answers it. */
export interface Changeset extends ChangesetStanding {
  changes: Change[];
  receipts: Receipt[];
}

/** A changeset in `GET …/changesets`: its changes counted, its receipts without the root's answers. */
export interface ChangesetRow extends ChangesetStanding {
  changeCount: number;
  twins: string[];
  states: Record<Change['state'], number>;
  receipts: Omit<Receipt, 'answer'>[];
}

/** `GET …/changesets`: newest first, the key approvals are signed with (made at the first), and the changes not cut yet per twin. */
export interface ChangesetList {
  changesets: ChangesetRow[];
  publicKey: { jwk: unknown; keyId: string } | null;
  unpushed: Record<string, number>;
}

/** `POST …/deploy/<name>`: every receipt of the changeset, those of earlier attempts too. */
export interface Deployed {
  /** Its name. */
  changeset: string;
  receipts: Receipt[];
  deployed: 'none' | 'partial' | 'all';
}
