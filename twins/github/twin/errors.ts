/**
 * GitHub's error shape: `{ message, documentation_url, status }`, with `errors` for a 422 (GitHub's
 * field errors) and any fields a refusal adds. A handler throws a GhError; `route()`
 * (lib/http.ts) answers it, keeping nothing the handler wrote. `failureBody` is the definition's
 * `errorBody`: a handler that throws anything else is answered in the same shape.
 */

export const DOCS = 'https://docs.github.com/rest';

/** A GitHub error answer; thrown by handlers, turned into the answer by `route()`. */
export class GhError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
  body(): Record<string, unknown> {
    return { message: this.message, ...this.extra, documentation_url: DOCS, status: String(this.status) };
  }
}

export const notFound = (): GhError => new GhError(404, 'Not Found');
export const badCredentials = (): GhError => new GhError(401, 'Bad credentials');
export const requiresAuth = (): GhError => new GhError(401, 'Requires authentication');
export const forbidden = (message: string): GhError => new GhError(403, message);

export interface FieldError {
  resource: string;
  field?: string;
  code: 'missing' | 'missing_field' | 'invalid' | 'already_exists' | 'unprocessable' | 'custom';
  message?: string;
  value?: unknown;
}

/** 422 Validation Failed with GitHub's `errors` array. */
export function validation(errors: FieldError[], message = 'Validation Failed'): GhError {
  return new GhError(422, message, { errors });
}

/** 422 Validation Failed whose `errors` are bare strings, as GitHub answers some refusals (topics). */
export function validationMessages(messages: string[]): GhError {
  return new GhError(422, 'Validation Failed', { errors: messages });
}

/** 422 with a message only (GitHub answers several semantic refusals this way). */
export function unprocessable(message: string): GhError {
  return new GhError(422, message);
}

/**
 * 500 for a record of the twin's that does not hold what the twin writes there (brought into
 * the world from elsewhere: the twin never writes one), named by type and id, so the world can
 * be restored from before it.
 */
export function malformedRecord(type: string, id: string, problem: string): GhError {
  return new GhError(500, `The GitHub twin's record of type '${type}' and id '${id}' is malformed (${problem}). The twin's records change only through its API: restore the world from before the record was written (docs/scenarios.md, "A damaged twin").`);
}

/** The twin's failure body (a throwing handler), in GitHub's shape. */
export function failureBody(status: number, _code: string, message: string): Record<string, unknown> {
  return { message: status >= 500 ? `Server Error: ${message}` : message, documentation_url: DOCS, status: String(status) };
}
