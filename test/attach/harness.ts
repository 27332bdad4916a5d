/**
 * What the attach tests share: a served world (the real runner in-process, in-memory
 * storage, with the CONNECT proxy and a memory CA), "the outside" (a local server standing
 * in for hosts no twin models), the Node attach entry and the `kit` executable bundled with
 * esbuild (so the tests need no `make build`), and a child-process runner.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import { startSingleWorldServer } from '../../host/single-world.js';
import type { SingleWorldServer, TwinScopes } from '../../host/single-world.js';
import { createMemoryCa } from '../../host/node/proxy/ca.js';
import { loadBuiltinTwins } from '../../sdk/twin/build.js';
import { openTestWorld } from '../helpers/world.js';
import type { TestWorld } from '../helpers/world.js';

export const REPO = process.cwd();
export const TOKENS = { token: 'tok_attach-write-token-0123456789abcdef', readToken: 'tok_r_attach-read-token-0123456789abcdef' };

export interface ServedWorld {
  world: TestWorld;
  server: SingleWorldServer;
  close(): Promise<void>;
}

/** The built-in twins named, served on loopback with the proxy, as `kit world serve` serves them. */
export async function serveWorld(vendors: string[], name = 'shop'): Promise<ServedWorld> {
  const world = await openTestWorld({ vendors, world: name });
  const builtins = await loadBuiltinTwins();
  const twins: TwinScopes[] = vendors.map((v) => {
    const m = builtins.get(v)?.manifest;
    if (m === undefined) throw new Error(`no built-in twin ${v}`);
    return { vendor: v, requestScopes: m.requestScopes, protocol: m.protocol, hosts: m.models.hosts, ...(m.models.endpointEnv ? { endpointEnv: m.models.endpointEnv } : {}) };
  });
  const server = await startSingleWorldServer({
    world: world.runner,
    org: 'local',
    worldName: name,
    tokens: TOKENS,
    twins,
    ca: await createMemoryCa({ label: `kit world local/${name}`, hosts: [...builtins.values()].flatMap((b) => b.manifest.models.hosts) }),
    proxyPort: 0,
  });
  return { world, server, close: () => server.close() };
}

export interface Outside {
  url: string;
  seen: { method: string; url: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

/** A plain HTTP server standing in for a host no twin models; it records what reached it. */
export async function startOutside(): Promise<Outside> {
  const seen: Outside['seen'] = [];
  const server: Server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    req.resume();
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ outside: true, url: req.url }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export interface Built {
  dir: string;
  /** The Node attach entry, as dist/sdk/attach/register.js would be. */
  entry: string;
  /** The `kit` executable, laid out as dist/sdk/cli/kit.js is (so it finds the entry beside it). */
  kit: string;
  close(): Promise<void>;
}

/** Bundles the entry and kit into a folder inside the repository (so node_modules resolves). */
export async function buildAttach(): Promise<Built> {
  const dir = await mkdtemp(join(REPO, 'test', 'attach', '.build-'));
  const entry = join(dir, 'sdk', 'attach', 'register.js');
  const kit = join(dir, 'sdk', 'cli', 'kit.js');
  const common = { bundle: true, platform: 'node', format: 'esm', packages: 'external', logLevel: 'silent', target: 'node20' } as const;
  await esbuild.build({ ...common, entryPoints: [join(REPO, 'sdk', 'attach', 'register.ts')], outfile: entry });
  await esbuild.build({ ...common, entryPoints: [join(REPO, 'sdk', 'cli', 'kit.ts')], outfile: kit });
  return { dir, entry, kit, close: () => rm(dir, { recursive: true, force: true }) };
}

export interface Run {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (or `timeoutMs`), collecting its output. */
export function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000, cwd = REPO): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The environment of a child with no attach variables inherited from whoever runs the tests. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(KIT_|NODE_OPTIONS$|NODE_EXTRA_CA_CERTS$|SSL_CERT_FILE$|REQUESTS_CA_BUNDLE$|CURL_CA_BUNDLE$|HTTPS?_PROXY$|https?_proxy$|NO_PROXY$|no_proxy$|VITEST|STRIPE_)/.test(k)) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

export { execFile };

/** Runs `command` under the built `kit world attach` at the served world with its token, in a clean environment. */
export function runAttached(served: ServedWorld, built: Built, command: string[], env: NodeJS.ProcessEnv = cleanEnv(), timeoutMs?: number): Promise<Run> {
  return run(process.execPath, [built.kit, 'world', 'attach', served.server.worldUrl, '--token', TOKENS.token, '--', ...command], env, timeoutMs);
}

/** A Stripe customer as the twin holds it under the app's API key, asked straight at the world (not through anything the app used). */
export async function customerInWorld(served: ServedWorld, id: string, key: string): Promise<{ status: number; id?: string; email?: string }> {
  const res = await fetch(`${served.server.worldUrl}/stripe/v1/customers/${encodeURIComponent(id)}`, { headers: { 'x-kit-token': TOKENS.token, authorization: `Bearer ${key}` } });
  return { status: res.status, ...((await res.json()) as { id?: string; email?: string }) };
}
