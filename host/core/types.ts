/**
 * The plain request and answer objects the socket layer and the in-process `dispatch`
 * share. Nothing here knows about worlds: the adapter turns bytes into an `HttpHead`
 * (and, when asked, a body) and an `HttpAnswer` back into bytes.
 */

export interface HttpHead {
  /** Upper case. */
  method: string;
  /** Percent-encoding intact, no query. */
  path: string;
  /** The raw query string without `?` ('' when none). */
  query: string;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** Epoch ms when the head arrived. */
  receivedAt: number;
  /**
   * Set by the world's proxy alone: the vendor origin the client addressed (`https://api.github.com`),
   * under which the twin's own paths sit; the path here is the server's mapping of it.
   */
  twinOrigin?: string;
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array | string;
  /** Close the connection without answering (a scenario's connection reset). */
  fault?: 'reset';
  /** Wait this long before answering; a timer, never a block. */
  delayMs?: number;
  /** Close the connection after this answer (e.g. a refused body the client is still sending). */
  close?: boolean;
}

/** Takes the body (undefined when the request has none) and answers. */
export type BodyReader = (body: Uint8Array | undefined) => Promise<HttpAnswer>;

/**
 * What a server hands the adapter. `head` runs synchronously on the head alone, before
 * any body is read, so a refused request (401, 404, 429) never costs its body.
 */
export interface HttpHandler {
  head(head: HttpHead): HttpAnswer | BodyReader;
  /** The answer to a body over the limit (413), in the server's error shape; `headers` are the request's. */
  tooLarge(limit: number, headers?: Readonly<Record<string, string>>): HttpAnswer;
  /**
   * The answer to a request whose head is malformed (repeated content-lengths that disagree, a
   * control character in a header value), in the server's error shape; the adapter closes the
   * connection after it. `headers` are the request's.
   */
  badRequest(message: string, headers?: Readonly<Record<string, string>>): HttpAnswer;
  /** The answer to a request that arrives while the server is stopping. */
  stopping(): HttpAnswer;
  /** The answer when a body reader throws (never expected: the server's own bug). */
  failed(error: unknown): HttpAnswer;
}
