/**
 * The codes only a host raises (authentication, budgets, the admin surface, its own files and
 * proxy); the runtime's codes are in runtime/errors.ts. Both answer in one body shape
 * (`CodedError.toBody`).
 */
import { CodedError } from '../runtime/errors.js';

const HOST_STATUS = {
  // authentication and scopes
  unauthenticated: 401,
  forbidden: 403,
  read_only: 403,
  // browser access: origins, sessions, keys, passes
  wrong_origin: 409,
  no_world_origin: 409,
  cross_site_request: 403,
  key_opens_no_session: 403,
  keys_need_write_access: 403,
  token_only_field: 403,
  key_name_taken: 409,
  too_many_keys: 409,
  unknown_key: 404,
  pass_malformed: 401,
  pass_untrusted_issuer: 401,
  pass_unknown_key: 401,
  pass_bad_signature: 401,
  pass_expired: 401,
  pass_wrong_world: 401,
  pass_wrong_origin: 401,
  pass_spent: 401,
  no_mirror: 404,
  // limits
  request_budget_exhausted: 429,
  // the admin surface
  invalid_name: 400,
  reserved_name: 400,
  unknown_vendor: 400,
  invalid_budget: 400,
  owner_recorded: 409,
  other_owner: 409,
  invalid_token: 400,
  // installed twins (/-/twins)
  invalid_vendor: 400,
  twin_exists: 409,
  twin_vendor_mismatch: 400,
  twin_too_large: 413,
  twin_in_use: 409,
  twin_builtin: 409,
  // the host's own state
  shutting_down: 503,
  world_unavailable: 503,
  token_file_corrupt: 500,
  sealing_key_corrupt: 500,
  ca_file_corrupt: 500,
  admin_file_corrupt: 500,
  // the proxy
  bad_gateway: 502,
  tunnel_refused: 403,
  too_many_tunnels: 429,
  proxy_busy: 503,
  // streams
  upgrade_required: 426,
} as const;

export type HostErrorCode = keyof typeof HOST_STATUS;

export class HostError extends CodedError<HostErrorCode> {
  override readonly name = 'HostError';
  constructor(code: HostErrorCode, message: string, details?: Record<string, unknown>) {
    super(code, HOST_STATUS[code], message, details);
  }
}

export function hostStatusOf(code: HostErrorCode): number {
  return HOST_STATUS[code];
}
