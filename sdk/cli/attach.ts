/**
 * `kit world attach <world url> --token <token> [--] <command> [args…]`: runs a command
 * attached to a world. Node apps get the attach entry (`NODE_OPTIONS=--import …`); apps in
 * any language get the world's proxy (`HTTPS_PROXY`) and CA (`SSL_CERT_FILE`, …); TCP
 * twins get loopback listeners (`SMTP_HOST`, …). Exit code: the command's.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants as osConstants } from 'node:os';
import { rootCertificates } from 'node:tls';
import { fileURLToPath } from 'node:url';
import type { AttachManifest } from '../attach/manifest.js';
import { AttachError, fetchManifest } from '../attach/node.js';
import { startStreamListeners } from '../attach/streams.js';
import { prepareLanguages, type AttachLanguage } from '../attach/languages/index.js';
import { UsageError } from './args.js';

export const ATTACH_USAGE = `Usage: kit world attach <world url> --token <token> [--] <command> [args...]

Runs <command> attached to the world at <world url> (as printed by \`kit world serve\`):
requests the app sends to a twinned vendor's hosts (api.stripe.com, ...) reach the twins,
with no change to the app.

  --token T     the world's token (or its read token); default: $KIT_WORLD_TOKEN.
                A --token value shows in the process list to this machine's other
                users; KIT_WORLD_TOKEN in kit's environment does not
  -h, --help    this help

The command runs with:
  KIT_WORLD, KIT_WORLD_TOKEN    the world and its token
  NODE_OPTIONS                  --import <the Node attach entry> (appended): fetch,
                                http/https and undici in Node apps reach the twins
  the manifest's env            KIT_TWINS_KEY and each twin's endpoint variable
  HTTPS_PROXY                   the world's proxy, with the token as its password:
                                any language reaches the twins at their vendors' addresses
  NO_PROXY                      localhost, 127.0.0.1 and ::1 added to yours: the proxy
                                tunnels to no loopback or private address
  SSL_CERT_FILE, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE
                                the usual roots plus the world's CA (a temporary file)
  NODE_EXTRA_CA_CERTS           the world's CA
  RUBYOPT                       -r<a file> (appended): Net::HTTP's TLS connections take
                                HTTPS_PROXY, and trust the world's CA in a store of their own
  PHP_INI_SCAN_DIR              a folder (appended) whose ini points curl.cainfo at the bundle
  PYTHONPATH                    kit's sitecustomize first: stripe, certifi, httplib2,
                                urllib3 and aiohttp reach the twins too
  JAVA_TOOL_OPTIONS             (appended) https.proxyHost/Port at a loopback relay that adds
                                the token, and a trust store of the JDK's roots plus the world's CA
  SMTP_HOST, SMTP_PORT, ...     loopback listeners piped to the world's stream twins

Everything after the command's name is the command's own. The temporary files and the
listeners go when the command ends; its exit code is kit's. SIGINT, SIGTERM and SIGHUP are
passed on to it.`;

/** Hosts an attached app reaches without the proxy, besides those it already names. */
const LOOPBACK_NO_PROXY = ['localhost', '127.0.0.1', '::1'];

export interface AttachOptions {
  worldUrl: string;
  token: string;
  command: string;
  args: string[];
}

/** Parses `kit world attach`'s arguments. Flags end at the command's name (or at `--`). */
export function parseAttachArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): AttachOptions | 'help' {
  let worldUrl: string | undefined;
  let token: string | undefined;
  let rest: string[] | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      rest = argv.slice(i + 1);
      break;
    }
    if (arg === '-h' || arg === '--help') return 'help';
    if (arg === '--token' || arg.startsWith('--token=')) {
      const value = arg === '--token' ? argv[++i] : arg.slice('--token='.length);
      if (value === undefined || value === '' || (arg === '--token' && value.startsWith('--'))) throw new UsageError('--token needs a value');
      token = value;
      continue;
    }
    if (arg.startsWith('-')) throw new UsageError(`unknown flag ${arg.split('=')[0] as string}`);
    if (worldUrl === undefined) {
      worldUrl = arg;
      continue;
    }
    rest = argv.slice(i);
    break;
  }
  if (worldUrl === undefined) throw new UsageError('name the world: kit world attach <world url> --token <token> -- <command>');
  let url: URL;
  try {
    url = new URL(worldUrl);
  } catch {
    throw new UsageError(`the world URL is not a URL: ${worldUrl}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`the world URL must be http or https, got ${worldUrl}`);
  token ??= env['KIT_WORLD_TOKEN'];
  if (token === undefined || token === '') throw new UsageError('--token is needed (or KIT_WORLD_TOKEN)');
  // It goes in a header: a stray newline or space (a copied line) would fail as "cannot reach".
  token = token.trim();
  if (!/^[\x21-\x7e]+$/.test(token)) throw new UsageError('the token holds spaces or control characters; give it as kit world serve printed it');
  if (rest === null || rest.length === 0 || rest[0] === '') throw new UsageError('name the command to run: kit world attach <world url> --token <token> -- <command>');
  return { worldUrl: worldUrl.replace(/\/+$/, ''), token, command: rest[0] as string, args: rest.slice(1) };
}

/** What `startStreamListeners` (sdk/attach/streams.ts, the streams side of attach) answers. */
export interface StreamListeners {
  env: Record<string, string>;
  close(): Promise<void>;
}
export type StartStreams = (manifest: AttachManifest, token: string) => Promise<StreamListeners>;

export interface AttachDeps {
  /** The Node attach entry's absolute path. Default: `dist/sdk/attach/register.js` beside this module. */
  attachEntry?: string;
  /** The stream listeners. Default: `startStreamListeners` (sdk/attach/streams.ts); null: none. */
  startStreams?: StartStreams | null;
  /** The environment the command inherits. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The languages prepared beyond the usual variables. Default: every one (sdk/attach/languages/). */
  languages?: readonly AttachLanguage[];
}

function defaultEntry(): string {
  return fileURLToPath(new URL('../attach/register.js', import.meta.url));
}

/** NODE_OPTIONS takes double quotes with backslash escapes around a value with spaces. */
function nodeOptionValue(path: string): string {
  return /[\s"\\]/.test(path) ? `"${path.replace(/[\\"]/g, '\\$&')}"` : path;
}

async function readIfThere(path: string | undefined): Promise<string> {
  if (path === undefined || path === '') return '';
  try {
    return await readFile(path, 'utf8');
  } catch {
    return '';
  }
}

const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Runs the command attached; answers its exit code (128 + n when a signal ended it). */
export async function runAttach(options: AttachOptions, io: { out(line: string): void; err(line: string): void }, deps: AttachDeps = {}): Promise<number> {
  const baseEnv = deps.env ?? process.env;
  const entry = deps.attachEntry ?? defaultEntry();
  if (!existsSync(entry)) {
    io.err(`kit: the Node attach entry is missing at ${entry}; run \`make build\``);
    return 1;
  }
  let manifest: AttachManifest;
  try {
    manifest = await fetchManifest(options.worldUrl, options.token);
  } catch (e) {
    io.err(`kit: ${e instanceof AttachError ? e.message : e instanceof Error ? e.message : String(e)}`);
    return 1;
  }

  let temp: string;
  try {
    temp = await mkdtemp(join(tmpdir(), 'kit-attach-'));
  } catch (e) {
    // Where kit writes the CA bundle for the app: a TMPDIR that is not there says so in a line.
    io.err(`kit: cannot make a temporary folder in ${tmpdir()} (${(e as NodeJS.ErrnoException).code ?? String(e)}); set TMPDIR to a writable folder`);
    return 1;
  }
  let streams: StreamListeners | null = null;
  let closeLanguages: (() => Promise<void>) | null = null;
  try {
    const env: NodeJS.ProcessEnv = { ...baseEnv };
    Object.assign(env, manifest.env);
    env['KIT_WORLD'] = options.worldUrl;
    env['KIT_WORLD_TOKEN'] = options.token;
    const prior = baseEnv['NODE_OPTIONS'];
    const importFlag = `--import ${nodeOptionValue(entry)}`;
    env['NODE_OPTIONS'] = prior === undefined || prior.trim() === '' ? importFlag : `${prior} ${importFlag}`;

    let caBundle: string | null = null;
    let worldCaPem: string | null = null;
    let proxyUrl: string | null = null;
    if (manifest.ca !== null) {
      const worldCa = manifest.ca.pem.endsWith('\n') ? manifest.ca.pem : `${manifest.ca.pem}\n`;
      // NODE_EXTRA_CA_CERTS adds to Node's roots; keep a file the user already named.
      const extra = join(temp, 'node-extra-ca.pem');
      await writeFile(extra, `${await readIfThere(baseEnv['NODE_EXTRA_CA_CERTS'])}\n${worldCa}`, { mode: 0o600 });
      env['NODE_EXTRA_CA_CERTS'] = extra;
      // The others replace a tool's roots: the usual roots go in too, or every untwinned host would fail.
      const prev = await readIfThere(baseEnv['SSL_CERT_FILE']);
      const bundle = join(temp, 'ca-bundle.pem');
      await writeFile(bundle, `${prev !== '' ? prev : rootCertificates.join('\n')}\n${worldCa}`, { mode: 0o600 });
      for (const name of ['SSL_CERT_FILE', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE']) env[name] = bundle;
      caBundle = bundle;
      worldCaPem = worldCa;
    }
    if (manifest.proxy !== null) {
      const u = new URL(manifest.proxy.url);
      u.username = 'kit';
      u.password = encodeURIComponent(options.token);
      const proxy = u.href.replace(/\/$/, '');
      // curl reads the lower-case name first; most other tools read either.
      env['HTTPS_PROXY'] = proxy;
      env['https_proxy'] = proxy;
      // The proxy tunnels to no loopback address (docs/attach.md): the app's own local services
      // are reached directly. Hosts the user already left out stay left out.
      const kept = [baseEnv['NO_PROXY'], baseEnv['no_proxy']].flatMap((v) => (v ?? '').split(',')).map((h) => h.trim()).filter((h) => h !== '');
      const noProxy = [...new Set([...kept, ...LOOPBACK_NO_PROXY])].join(',');
      env['NO_PROXY'] = noProxy;
      env['no_proxy'] = noProxy;
      proxyUrl = proxy;
    }
    // Each language whose clients ignore the variables above (sdk/attach/languages/).
    closeLanguages = await prepareLanguages({ temp, env, baseEnv, worldCa: worldCaPem, caBundle, proxyUrl, noProxy: env['NO_PROXY'] ?? '', hosts: manifest.proxy?.hosts ?? [], warn: (line) => io.err(line) }, deps.languages);

    const streamIds = Object.keys(manifest.streams);
    if (streamIds.length > 0) {
      const start = deps.startStreams === undefined ? startStreamListeners : deps.startStreams;
      if (start === null) {
        io.err(`kit: the world has stream twins (${streamIds.join(', ')}) but this kit has no stream listeners; they are not attached`);
      } else {
        try {
          streams = await start(manifest, options.token);
        } catch (e) {
          io.err(`kit: cannot start the stream listeners: ${e instanceof Error ? e.message : String(e)}`);
          return 1;
        }
        Object.assign(env, streams.env);
      }
    }

    // The command is looked up in the user's own PATH (spawn searches the child's), whatever
    // else the environment was given.
    if (baseEnv['PATH'] === undefined) delete env['PATH'];
    else env['PATH'] = baseEnv['PATH'];

    return await new Promise<number>((resolve) => {
      // Handlers go in before the child exists: a signal in between is held and passed on,
      // never left to kill kit by default while the command runs on, orphaned.
      let child: ChildProcess | null = null;
      const held: NodeJS.Signals[] = [];
      const forward = (signal: NodeJS.Signals): void => {
        if (child === null) held.push(signal);
        else if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      };
      const handlers = FORWARDED.map((signal) => {
        const h = (): void => forward(signal);
        process.on(signal, h);
        return [signal, h] as const;
      });
      let finished = false;
      const done = (code: number): void => {
        if (finished) return;
        finished = true;
        for (const [signal, h] of handlers) process.off(signal, h);
        resolve(code);
      };
      child = spawn(options.command, options.args, { stdio: 'inherit', env });
      child.once('error', (e: NodeJS.ErrnoException) => {
        io.err(`kit: cannot run ${options.command}: ${e.code === 'ENOENT' ? 'not found' : e.code === 'EACCES' ? 'permission denied' : e.message}`);
        done(e.code === 'ENOENT' ? 127 : 126);
      });
      child.once('exit', (code, signal) => {
        if (code !== null) done(code);
        else done(128 + (signal !== null ? (osConstants.signals[signal] ?? 0) : 0));
      });
      for (const signal of held) forward(signal);
    });
  } finally {
    if (streams !== null) await streams.close().catch(() => undefined);
    if (closeLanguages !== null) await closeLanguages();
    await rm(temp, { recursive: true, force: true });
  }
}
