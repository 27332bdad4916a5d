/**
 * Errors of the runtime layer. Callers and tests switch on `code`, never on message text.
 * Each code maps to one HTTP status when it crosses the world API (see `statusOf`).
 * Misuse of an API by a programmer is a plain TypeError, not a KitError.
 */
export type KitErrorCode =
  // input that is malformed
  | 'bad_request'
  | 'invalid_json'
  | 'unsupported_media_type'
  | 'invalid_instant'
  | 'invalid_duration'
  | 'invalid_position'
  | 'invalid_label'
  | 'invalid_ttl'
  | 'invalid_cursor'
  | 'invalid_limit'
  | 'invalid_scenario'
  | 'invalid_check'
  | 'invalid_twin'
  | 'invalid_world_file'
  | 'invalid_import'
  | 'invalid_root'
  | 'invalid_credential'
  | 'invalid_link'
  | 'invalid_changeset'
  | 'changeset_hash_mismatch'
  | 'invalid_origin'
  | 'confirm_required'
  | 'destination_refused'
  // things that are not there
  | 'not_found'
  | 'unknown_world'
  | 'unknown_twin'
  | 'unknown_branch'
  | 'unknown_store'
  | 'unknown_check'
  | 'unknown_stream'
  | 'position_beyond_head'
  | 'no_scenario'
  | 'method_not_allowed'
  | 'no_root'
  | 'no_credential'
  | 'no_ingest'
  | 'unknown_link'
  | 'unknown_changeset'
  | 'no_origin'
  // state conflicts
  | 'clock_backward'
  | 'clock_unset'
  | 'live_branch_needs_now'
  | 'world_exists'
  | 'world_has_branches'
  | 'world_released'
  | 'twin_not_empty'
  | 'link_names_twin'
  | 'refresh_in_progress'
  | 'webhook_replayed'
  // changesets and origins
  | 'nothing_to_cut'
  | 'changeset_exists'
  | 'base_not_current'
  | 'changeset_hash_changed'
  | 'changeset_not_verified'
  | 'verification_failed'
  | 'deploy_in_progress'
  | 'deploy_failed'
  | 'origin_needs_empty_world'
  | 'origin_unreachable'
  | 'origin_refused'
  | 'pull_conflicts'
  // webhooks and the vendor behind a root
  | 'webhook_unverified'
  | 'webhook_stale'
  | 'refresh_failed'
  | 'outbound_failed'
  | 'outbound_timeout'
  | 'outbound_too_large'
  | 'sealing_unavailable'
  | 'refresh_throttled'
  | 'link_needs_token'
  // limits
  | 'body_too_large'
  | 'checkpoint_too_large'
  | 'too_many_checks'
  | 'import_too_large'
  | 'export_too_large'
  | 'credential_too_large'
  | 'too_many_links'
  | 'changeset_too_large'
  // the host
  | 'catching_up'
  // the sandbox
  | 'handler_error'
  | 'handler_timeout'
  | 'handler_out_of_memory'
  | 'sandbox_crashed'
  | 'no_handler'
  // storage
  | 'storage_closed'
  | 'storage_failed'
  | 'storage_locked'
  | 'storage_corrupt'
  | 'internal';

const STATUS: Record<KitErrorCode, number> = {
  bad_request: 400, invalid_json: 400, unsupported_media_type: 415, invalid_instant: 400,
  invalid_duration: 400, invalid_position: 400, invalid_label: 400, invalid_ttl: 400,
  invalid_cursor: 400, invalid_limit: 400, invalid_scenario: 400, invalid_check: 400,
  invalid_twin: 400, invalid_world_file: 400, invalid_import: 400, invalid_root: 400, invalid_credential: 400, invalid_link: 400, destination_refused: 400,
  invalid_changeset: 400, changeset_hash_mismatch: 400, invalid_origin: 400, confirm_required: 400,
  not_found: 404, unknown_world: 404, unknown_twin: 404, unknown_branch: 404, unknown_store: 404,
  unknown_check: 404, unknown_stream: 404, position_beyond_head: 404, no_scenario: 404, method_not_allowed: 405,
  no_root: 409, no_credential: 409, no_ingest: 404, unknown_link: 404, unknown_changeset: 404, no_origin: 409,
  clock_backward: 409, clock_unset: 409, live_branch_needs_now: 400, world_exists: 409, world_has_branches: 409, world_released: 503,
  twin_not_empty: 409, link_names_twin: 409, refresh_in_progress: 409, webhook_replayed: 409,
  nothing_to_cut: 409, changeset_exists: 409, base_not_current: 409, changeset_hash_changed: 409, changeset_not_verified: 409,
  verification_failed: 409, deploy_in_progress: 409, deploy_failed: 502, origin_needs_empty_world: 409, origin_unreachable: 502,
  origin_refused: 502, pull_conflicts: 409,
  webhook_unverified: 401, webhook_stale: 401, refresh_failed: 502, outbound_failed: 502, outbound_timeout: 504,
  outbound_too_large: 502, sealing_unavailable: 503, refresh_throttled: 429, link_needs_token: 403,
  body_too_large: 413, checkpoint_too_large: 413, too_many_checks: 409, import_too_large: 413, export_too_large: 413,
  credential_too_large: 413, too_many_links: 409, changeset_too_large: 413,
  catching_up: 503,
  handler_error: 500, handler_timeout: 500, handler_out_of_memory: 500, sandbox_crashed: 503,
  no_handler: 404,
  storage_closed: 503, storage_failed: 503, storage_locked: 409, storage_corrupt: 500, internal: 500,
};

/**
 * An error with a stable code and its HTTP status: the runtime's `KitError`, and the codes a
 * host raises itself (host/errors.ts). Every one answers in the same body shape.
 */
export class CodedError<C extends string = string> extends Error {
  constructor(
    readonly code: C,
    readonly status: number,
    message: string,
    /** Extra fields for the error body, e.g. `{ param: 'at' }` or `{ origin }`. */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  /** The one JSON body shape every world API error has. */
  toBody(): { error: { code: C; message: string } & Record<string, unknown> } {
    return { error: { code: this.code, message: this.message, ...this.details } };
  }
}

export class KitError extends CodedError<KitErrorCode> {
  override readonly name = 'KitError';
  constructor(code: KitErrorCode, message: string, details?: Record<string, unknown>) {
    super(code, STATUS[code], message, details);
  }
}

export function statusOf(code: KitErrorCode): number {
  return STATUS[code];
}

export function isKitError(e: unknown): e is KitError {
  return e instanceof KitError;
}

export function isCodedError(e: unknown): e is CodedError {
  return e instanceof CodedError;
}
