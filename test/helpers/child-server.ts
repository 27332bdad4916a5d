/**
 * The single-world server over an echo world in a child process (echo-server.child.ts), and a
 * raw HTTP/1.1 client that checks every byte it gets back is a well-formed answer. For tests
 * of the uWS adapter where a bug aborts the process: the test asserts the server is alive.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleForNode } from './bundle.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');

export const CHILD_TOKENS = { token: 'tok_child-write-token-0123456789', readToken: 'tok_r_child-read-token-0123456789' };

export interface ChildServerOptions {
  maxBodyBytes?: number;
  /** The request budget; a window of 1e12 ms never refills within a test. */
  budget?: { size: number; windowMs: number } | false;
  drainTimeoutMs?: number;
}

export interface ChildServer {
  readonly port: number;
  readonly child: ChildProcess;
  /** Null while the process runs; else how it ended (`SIGABRT`, `exit 1`) and its stderr. */
  death(): string | null;
  release(gate: string): Promise<void>;
  /** Starts the server's stop; resolves once it has closed. */
  close(): Promise<void>;
  /** `METHOD /path` of every request the world was handed. */
  received(): Promise<string[]>;
  kill(): void;
}

let source: Promise<string> | null = null;

export async function startChildServer(options: ChildServerOptions = {}): Promise<ChildServer> {
  source ??= bundleForNode(join(here, 'echo-server.child.ts'));
  const child = spawn(process.execPath, ['--input-type=module'], {
    cwd: repo,
    env: { ...process.env, KIT_ECHO_SERVER: JSON.stringify({ tokens: CHILD_TOKENS, ...options }) },
    stdio: ['pipe', 'inherit', 'pipe', 'ipc'],
  });
  child.stdin?.end(await source);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  let ended: string | null = null;
  child.on('exit', (code, signal) => (ended = signal ?? `exit ${String(code)}`));
  let next = 0;
  const waiting = new Map<number, (m: Record<string, unknown>) => void>();
  const port = await new Promise<number>((ok, fail) => {
    child.on('message', (m: Record<string, unknown>) => {
      if (typeof m['port'] === 'number') ok(m['port']);
      const id = m['id'];
      if (typeof id === 'number') waiting.get(id)?.(m);
    });
    child.on('exit', () => fail(new Error(`the child server ended (${String(ended)}): ${stderr}`)));
  });
  const ask = (m: object): Promise<Record<string, unknown>> =>
    new Promise((ok) => {
      const id = next++;
      waiting.set(id, ok);
      child.send({ id, ...m });
    });
  return {
    port,
    child,
    death: () => (ended === null && child.exitCode === null && child.signalCode === null ? null : `${String(ended ?? child.signalCode ?? child.exitCode)}: ${stderr}`),
    release: async (gate) => void (await ask({ cmd: 'release', gate })),
    close: async () => void (await ask({ cmd: 'close' })),
    received: async () => (await ask({ cmd: 'received' }))['received'] as string[],
    kill: () => void child.kill('SIGKILL'),
  };
}

export interface RawResponse {
  status: number;
  /** Lower-case names, in order. */
  headers: [string, string][];
  body: Buffer;
}

/** Parsed from what came back on one connection, for the requests sent on it in order. */
export interface Exchange {
  responses: RawResponse[];
  /** The server closed the connection (or reset it). */
  closed: boolean;
  reset: boolean;
}

export function header(r: RawResponse, name: string): string | undefined {
  return r.headers.find(([n]) => n === name)?.[1];
}

const STATUS_LINE = /^HTTP\/1\.1 (\d{3}) [^\r\n\x00-\x08\x0a-\x1f\x7f]*$/;
const FIELD_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+): ?([^\x00-\x08\x0a-\x1f\x7f]*)$/;

/**
 * Takes the whole responses at the start of `bytes`, one per method in `methods` (a HEAD's, a
 * 204's and a 304's carry no body). Throws on anything that is not a well-formed answer; a body
 * without a length runs to the close and needs `connection: close`.
 */
export function parseResponses(bytes: Buffer, methods: readonly string[], closed: boolean): { responses: RawResponse[]; rest: Buffer } {
  const responses: RawResponse[] = [];
  let at = 0;
  while (responses.length < methods.length && at < bytes.length) {
    const end = bytes.indexOf('\r\n\r\n', at, 'latin1');
    if (end < 0) break;
    const lines = bytes.subarray(at, end).toString('latin1').split('\r\n');
    const statusLine = lines.shift() ?? '';
    const m = STATUS_LINE.exec(statusLine);
    if (m === null) throw new Error(`not a status line: ${JSON.stringify(statusLine)} in ${JSON.stringify(bytes.toString('latin1'))}`);
    const status = Number(m[1]);
    const headers: [string, string][] = lines.map((line) => {
      const f = FIELD_LINE.exec(line);
      if (f === null) throw new Error(`not a header line: ${JSON.stringify(line)}`);
      return [(f[1] as string).toLowerCase(), (f[2] as string).trim()];
    });
    const lengths = headers.filter(([n]) => n === 'content-length').map(([, v]) => v);
    if (lengths.length > 1) throw new Error(`${lengths.length} content-length headers: ${statusLine}`);
    if (headers.some(([n]) => n === 'transfer-encoding')) throw new Error(`unexpected transfer-encoding: ${statusLine}`);
    if (status < 200) throw new Error(`an interim answer: ${statusLine}`);
    const bodyStart = end + 4;
    const method = methods[responses.length] as string;
    const closing = header({ status, headers, body: Buffer.alloc(0) }, 'connection')?.toLowerCase() === 'close';
    let bodyEnd: number;
    if (lengths.length === 0 && closing && !headers.some(([n]) => n === 'date')) {
      // uWS's own error pages (400, 431, 505): no length and no date, a body up to the close,
      // to a HEAD too. Only the close delimits them.
      if (!closed) break;
      bodyEnd = bytes.length;
    } else if (method === 'HEAD' || status === 204 || status === 304) {
      if ((status === 204 || status === 304) && lengths.length > 0 && lengths[0] !== '0') throw new Error(`a length on ${statusLine}`);
      bodyEnd = bodyStart;
    } else if (lengths.length === 1) {
      if (!/^\d+$/.test(lengths[0] as string)) throw new Error(`bad content-length ${lengths[0]}`);
      bodyEnd = bodyStart + Number(lengths[0]);
      if (bodyEnd > bytes.length) break;
    } else {
      if (!closing) throw new Error(`no length and no close: ${statusLine}`);
      if (!closed) break;
      bodyEnd = bytes.length;
    }
    responses.push({ status, headers, body: bytes.subarray(bodyStart, bodyEnd) });
    at = bodyEnd;
  }
  return { responses, rest: bytes.subarray(at) };
}

/** Bytes to send, and the methods of the requests in them (one answer is awaited for each). */
export type Step = [bytes: Buffer | string, methods: readonly string[]];

/**
 * One connection: sends each step once every answer to the steps before it is in, and reads
 * until all are answered or the server closes. Throws if a byte that came back is not part
 * of a well-formed answer (a HEAD's body, a stray second answer, half an answer at the close).
 */
export function exchange(port: number, ...steps: Step[]): Promise<Exchange> {
  return converse(port, steps, false);
}

/** `exchange`, then reads on until the server closes the connection. */
export function exchangeToClose(port: number, ...steps: Step[]): Promise<Exchange> {
  return converse(port, steps, true);
}

function converse(port: number, steps: Step[], untilClose: boolean): Promise<Exchange> {
  return new Promise((resolvePromise, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let sent = 0;
    let methods: string[] = [];
    let done = false;
    let reset = false;
    const send = (): void => {
      const [bytes, more] = steps[sent++] as Step;
      methods = methods.concat(more);
      socket.write(bytes);
    };
    const finish = (closed: boolean): void => {
      if (done) return;
      let parsed: ReturnType<typeof parseResponses>;
      try {
        parsed = parseResponses(Buffer.concat(chunks), methods, closed);
      } catch (e) {
        done = true;
        socket.destroy();
        reject(e as Error);
        return;
      }
      const complete = parsed.responses.length === methods.length;
      if (complete && !closed && parsed.rest.length === 0 && sent < steps.length) {
        send();
        return;
      }
      if (!closed && (untilClose || !(complete && sent === steps.length))) return;
      done = true;
      socket.destroy();
      if (parsed.rest.length > 0) {
        reject(new Error(`bytes that are no whole answer: ${JSON.stringify(parsed.rest.toString('latin1').slice(0, 200))}`));
        return;
      }
      resolvePromise({ responses: parsed.responses, closed, reset });
    };
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      finish(false);
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNRESET' || e.code === 'EPIPE') reset = true;
      else reject(e);
    });
    socket.on('close', () => finish(true));
    socket.on('connect', send);
  });
}
