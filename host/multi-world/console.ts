/**
 * The console's files (built by `make build` from console/ into dist/console/), served at
 * `/-/console/` with no credential: the page asks for the admin token itself. Read from
 * disk on each request (a few small files), so a rebuilt console needs no restart.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hostAnswer } from '../core/answers.js';
import type { HttpAnswer } from '../core/types.js';

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  ico: 'image/x-icon',
};
const FILE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/** Where `make build` puts the console, beside this module's compiled tree (dist/console/). */
export function defaultConsoleDir(): string {
  return fileURLToPath(new URL('../../console/', import.meta.url));
}

export function consoleAnswer(dir: string | null, path: string[], method: string, code: string): HttpAnswer {
  if (method !== 'GET' && method !== 'HEAD') return hostAnswer('method_not_allowed', 'the console answers GET', code, { allow: 'GET, HEAD' });
  if (dir === null) return hostAnswer('not_found', 'the console is not installed beside this host (make build makes it)', code);
  const parts = path[0] === 'assets' ? path.slice(1) : path;
  const file = parts.length === 0 ? 'index.html' : parts.length === 1 ? parts[0]! : '';
  if (!FILE.test(file) || file.includes('..')) return hostAnswer('not_found', `no console file ${path.join('/')}`, code);
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(dir, file));
  } catch {
    return hostAnswer('not_found', file === 'index.html' ? 'the console is not built: run make build' : `no console file ${file}`, code);
  }
  const ext = file.slice(file.lastIndexOf('.') + 1);
  return {
    status: 200,
    headers: {
      'content-type': TYPES[ext] ?? 'application/octet-stream',
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
      // The page talks to this host only; nothing else may frame or feed it.
      'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
      'x-kit-world-code': code,
    },
    body: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
  };
}
