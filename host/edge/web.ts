/**
 * The host core over Web-standard `Request` and `Response`, as workerd serves them: a head
 * judged before the body is read (a 401, 404 or 429 never costs its body), a body read up to
 * the limit, an `HttpAnswer` back as a `Response`. What node/http/uws.ts is to uWS.
 */
import type { HttpAnswer, HttpHandler, HttpHead } from '../core/types.js';

/** The head of a request: path with its percent-encoding, query without `?`, lower-case headers. */
export function headOf(request: Request, receivedAt = Date.now()): HttpHead {
  const url = request.url;
  // The path as sent: `new URL` would resolve dot segments, which the core judges itself.
  const afterScheme = url.indexOf('//') + 2;
  const pathStart = url.indexOf('/', afterScheme);
  const rest = pathStart < 0 ? '/' : url.slice(pathStart);
  const hash = rest.indexOf('#');
  const target = hash < 0 ? rest : rest.slice(0, hash);
  const q = target.indexOf('?');
  const headers = Object.create(null) as Record<string, string>;
  request.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return { method: request.method.toUpperCase(), path: q < 0 ? target : target.slice(0, q), query: q < 0 ? '' : target.slice(q + 1), headers, receivedAt };
}

/** A status that carries no body (fetch's Response refuses one). */
const NO_BODY = new Set([101, 204, 205, 304]);

export function toResponse(answer: HttpAnswer, method: string): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) headers.set(name, value);
  if (answer.close === true) headers.set('connection', 'close');
  const empty = NO_BODY.has(answer.status) || method === 'HEAD';
  const body: BodyInit | null = empty ? null : typeof answer.body === 'string' ? answer.body : answer.body.byteLength === 0 ? null : (answer.body as Uint8Array<ArrayBuffer>);
  return new Response(body, { status: answer.status, headers });
}

/**
 * How much of a body the answer does not need (past the limit, or refused on the head) is still
 * read, and dropped, before the answer goes out: workerd closes a connection whose request body
 * was left unread, and a client still writing it then sees a reset instead of the 413 or 401
 * (node/http/uws.ts drops such a body as it arrives). Past this much, the connection is cut.
 */
const DRAINED_BYTES = 16 * 1024 * 1024;

/** Reads and drops the rest of a body, up to `DRAINED_BYTES` in all. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, read: number): Promise<void> {
  try {
    while (read <= DRAINED_BYTES) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
    }
    await reader.cancel();
  } catch {
    // The client went away: nothing is left to read.
  }
}

/** Reads the body up to `limit` bytes; null when it is longer (the rest drained). */
async function readBody(request: Request, limit: number): Promise<Uint8Array | null> {
  if (request.body === null) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await drain(reader, size);
      return null;
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** One request through `handler`: what a Worker's or a Durable Object's `fetch` answers. */
export async function answerRequest(handler: HttpHandler, request: Request, maxBodyBytes: number, head: HttpHead = headOf(request)): Promise<Response> {
  const declared = head.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBodyBytes) {
    if (request.body !== null && Number(declared) <= DRAINED_BYTES) await drain(request.body.getReader(), 0);
    return toResponse(handler.tooLarge(maxBodyBytes, head.headers), head.method);
  }
  const first = handler.head(head);
  if (typeof first !== 'function') {
    // Answered without the body (a 401, a 404, a 429): what the client still sends is dropped.
    if (request.body !== null && !request.bodyUsed) await drain(request.body.getReader(), 0);
    return delayed(first, head.method);
  }
  const body = await readBody(request, maxBodyBytes);
  if (body === null) return toResponse(handler.tooLarge(maxBodyBytes, head.headers), head.method);
  let answer: HttpAnswer;
  try {
    answer = await first(body.byteLength > 0 ? body : undefined);
  } catch (e) {
    answer = handler.failed(e);
  }
  return delayed(answer, head.method);
}

async function delayed(answer: HttpAnswer, method: string): Promise<Response> {
  if (answer.delayMs !== undefined && answer.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
  // A scenario's connection reset: workerd cannot drop the client's connection from here; the
  // closest a Worker can do is fail the response, which the client sees as a broken one.
  if (answer.fault === 'reset') throw new Error('connection reset by the scenario');
  return toResponse(answer, method);
}
