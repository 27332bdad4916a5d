/**
 * Every world endpoint of the spec's tables (world-and-twin-api.md, Endpoints), with whether
 * the read token opens it and what the runtime world answers the world's token on a fresh
 * world (hello, stripe and github, nothing done yet). An endpoint the runtime does not serve
 * yet answers its own 404 `not_found`: past the host, which is what the matrix is about. Sessions
 * and keys are the host's own (host/core/access/).
 */

export interface Answered {
  status: number;
  /** `error.code` of the answer, when it is an error. */
  code?: string;
}

export interface WorldEndpoint {
  method: string;
  /** Below `{world_api}`, query included. */
  path: string;
  /** The spec's "read" column. */
  read: boolean;
  /** The world's answer to its token. */
  answer: Answered;
  /** `…/branches`: the answer on a host that makes branches (the others answer 404 `not_found`). */
  branches?: Answered;
}

const missing: Answered = { status: 404, code: 'not_found' };

export const WORLD_ENDPOINTS: readonly WorldEndpoint[] = [
  // History
  { method: 'GET', path: '/log/hello?after=0', read: true, answer: { status: 200 } },
  { method: 'GET', path: '/log/hello?after=3', read: true, answer: { status: 404, code: 'position_beyond_head' } },
  { method: 'GET', path: '/checkpoint/hello?at=0', read: true, answer: { status: 200 } },
  { method: 'GET', path: '/checkpoint/hello', read: true, answer: { status: 200 } },
  { method: 'GET', path: '/changesets', read: true, answer: { status: 200 } },
  { method: 'GET', path: '/changesets/cs-1', read: true, answer: { status: 404, code: 'unknown_changeset' } },
  { method: 'GET', path: '/requests?hours=24', read: true, answer: { status: 200 } },
  // Pushing and deploying
  { method: 'POST', path: '/push', read: false, answer: { status: 400, code: 'invalid_changeset' } },
  { method: 'POST', path: '/changesets/cs-1/verify', read: false, answer: { status: 404, code: 'unknown_changeset' } },
  { method: 'POST', path: '/changesets/cs-1/approve', read: false, answer: { status: 404, code: 'unknown_changeset' } },
  { method: 'POST', path: '/deploy', read: false, answer: { status: 200 } },
  { method: 'POST', path: '/deploy/cs-1', read: false, answer: { status: 404, code: 'unknown_changeset' } },
  { method: 'POST', path: '/changesets', read: false, answer: { status: 400, code: 'invalid_changeset' } },
  // A twin's root and the world's relations
  { method: 'GET', path: '/twins', read: true, answer: { status: 200 } },
  { method: 'GET', path: '/twins/hello/status', read: false, answer: { status: 200 } },
  { method: 'GET', path: '/twins/hello/root', read: false, answer: { status: 200 } },
  { method: 'PUT', path: '/twins/hello/root', read: false, answer: { status: 400, code: 'invalid_root' } },
  { method: 'PUT', path: '/twins/hello/credential', read: false, answer: { status: 400, code: 'invalid_credential' } },
  { method: 'GET', path: '/twins/hello/credential', read: false, answer: { status: 200 } },
  { method: 'GET', path: '/twins/hello/scenario', read: false, answer: { status: 404, code: 'no_scenario' } },
  { method: 'PUT', path: '/twins/hello/scenario', read: false, answer: { status: 400, code: 'invalid_scenario' } },
  { method: 'DELETE', path: '/twins/hello/scenario', read: false, answer: { status: 404, code: 'no_scenario' } },
  { method: 'POST', path: '/twins/hello/refresh?force=1', read: false, answer: { status: 409, code: 'no_root' } },
  { method: 'GET', path: '/origin', read: false, answer: { status: 200 } },
  { method: 'PUT', path: '/origin', read: false, answer: { status: 400, code: 'invalid_origin' } },
  { method: 'POST', path: '/origin/pull', read: false, answer: { status: 409, code: 'no_origin' } },
  { method: 'POST', path: '/origin/push', read: false, answer: { status: 409, code: 'no_origin' } },
  { method: 'GET', path: '/links', read: false, answer: { status: 200 } },
  { method: 'PUT', path: '/links/real', read: false, answer: { status: 400, code: 'invalid_link' } },
  { method: 'DELETE', path: '/links/real', read: false, answer: { status: 404, code: 'unknown_link' } },
  { method: 'GET', path: '/checks', read: false, answer: { status: 200 } },
  { method: 'PUT', path: '/checks/no-negative', read: false, answer: { status: 400, code: 'invalid_check' } },
  { method: 'DELETE', path: '/checks/no-negative', read: false, answer: { status: 404, code: 'unknown_check' } },
  // Sessions and keys
  // (answered by the host: a session lives at the world's own origin, not the base URL these cases use)
  { method: 'POST', path: '/session', read: true, answer: { status: 409, code: 'wrong_origin' } },
  { method: 'GET', path: '/session', read: true, answer: { status: 200 } },
  { method: 'DELETE', path: '/session', read: true, answer: { status: 204 } },
  { method: 'GET', path: '/keys', read: false, answer: { status: 200 } },
  { method: 'POST', path: '/keys', read: false, answer: { status: 400, code: 'bad_request' } },
  { method: 'DELETE', path: '/keys/key-1', read: false, answer: { status: 404, code: 'unknown_key' } },
  { method: 'DELETE', path: '/keys?person=someone', read: false, answer: { status: 200 } },
  // Looking into a world
  { method: 'GET', path: '/map', read: true, answer: { status: 200 } },
  { method: 'GET', path: '/timeline?limit=10&twin=hello', read: true, answer: { status: 200 } },
  { method: 'GET', path: '/diff', read: true, answer: { status: 200 } },
  { method: 'GET', path: '/clock', read: true, answer: { status: 200 } },
  { method: 'PUT', path: '/clock', read: false, answer: { status: 400, code: 'invalid_instant' } },
  { method: 'POST', path: '/clock/advance', read: false, answer: { status: 400, code: 'invalid_duration' } },
  { method: 'GET', path: '/history?at=2026-01-01T00:00:00.000Z', read: true, answer: { status: 200 } },
  { method: 'GET', path: '/branches', read: true, answer: missing, branches: { status: 200 } },
  { method: 'POST', path: '/branches', read: false, answer: missing, branches: { status: 201 } },
  { method: 'DELETE', path: '/branches/acme/none-1a2b', read: false, answer: missing, branches: { status: 404, code: 'unknown_branch' } },
];

/** The methods a vendor's API is asked with. */
export const VENDOR_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** Each way the world's token rides on the vendor wire (Authentication 1, 2), and whether it comes in `Authorization`. */
export const CREDENTIAL_FORMS: readonly { name: string; headers: (t: string) => Record<string, string>; viaAuthorization: boolean }[] = [
  { name: 'x-kit-token', headers: (t) => ({ 'x-kit-token': t }), viaAuthorization: false },
  { name: 'x-twins-key', headers: (t) => ({ 'x-twins-key': t }), viaAuthorization: false },
  { name: 'Bearer', headers: (t) => ({ authorization: `Bearer ${t}` }), viaAuthorization: true },
  { name: 'bearer (lower case)', headers: (t) => ({ authorization: `bearer ${t}` }), viaAuthorization: true },
  { name: 'token', headers: (t) => ({ authorization: `token ${t}` }), viaAuthorization: true },
  { name: 'Basic password', headers: (t) => ({ authorization: basic('AC123', t) }), viaAuthorization: true },
  { name: 'Basic password, empty user', headers: (t) => ({ authorization: basic('', t) }), viaAuthorization: true },
  { name: 'Basic user name, no password (curl -u <token>:)', headers: (t) => ({ authorization: basic(t, '') }), viaAuthorization: true },
];
