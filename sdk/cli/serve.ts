/**
 * `kit world serve`: one world from a directory on the single-world server. The world
 * and the built-in twins come in through `ServeDeps`, so tests serve a fake world.
 */
import { stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { KitError } from '../../runtime/errors.js';
import { openLmdbStorage } from '../../runtime/store/lmdb.js';
import type { UntrustedLane } from '../../runtime/lane/types.js';
import type { ColocatedFiles, LocalWorldHandle, LocalWorldOptions, TwinBundle, WorldHandle } from '../../runtime/runner/types.js';
import { mintTokens, readTokenFile, tokenFilePath, writeTokenFile } from '../../host/index.js';
import type { TokenFile } from '../../host/index.js';
import { describeBudget, loadOrCreateCa, NAME_PATTERN, parseBudget, startSingleWorldServer, twinScopesOf } from '../../host/index.js';
import type { SingleWorldServer } from '../../host/index.js';
import { loadOrCreateSealingKey } from '../../host/node/sealing-key.js';
import { loadOutboundProxy, outboundProxyFromEnv, type OutboundProxyOption } from './outbound-proxy.js';
import { parseArgs, parseList, parsePort, UsageError } from './args.js';
import type { FlagSpec } from './args.js';
import { describeTrust, parseTrust, passVerifierFor, TRUST_FLAG, trustUsage } from './trust.js';
import { readWorldFile, WORLD_FILE_NAME, type WorldFile, type WorldFileTwin } from './world-file.js';
import { buildProblem, describeBuildProblem, watchTwinSources, type DevTwin } from './dev-twins.js';

export const DEFAULT_PORT = 4440;
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_ORG = 'local';

export interface ServeOptions {
  dir: string;
  port: number;
  host: string;
  org: string;
  /** Default: the directory's name, made into a world name. */
  world?: string;
  /** Default: every built-in twin. */
  twins?: string[];
  /** The CONNECT proxy's port; default the server's port + 1 (a free one when that is 0). */
  proxyPort?: number;
  /** The world's request budget (`--budget`); none by default. */
  budget?: { size: number; windowMs: number };
  /** `--inline` was given: it changes nothing now (the world runs in the server's thread by default) and is noted. */
  inlineGiven?: boolean;
  /** Issuers whose passes open the world's page (`--trust`, `TRUSTED_ISSUERS`); default none. */
  trustedIssuers?: string[];
  /** A proxy every call to a real vendor goes through (`KIT_OUTBOUND_PROXY`, `KIT_OUTBOUND_CA`: docs/roots.md). */
  outboundProxy?: OutboundProxyOption;
  /** `--org` was given (it wins over the world file's `org:`). */
  orgGiven?: boolean;
  /** `--dev`: rebuild each twin from sources on an edit (docs/world-file.md). */
  dev?: boolean;
  /** Where the world tells what happens after it starts (a colocated file read again or refused, a rebuild); default standard error. */
  report?: (line: string) => void;
}

export interface ServeDeps {
  loadTwins(): Promise<Map<string, TwinBundle>>;
  openWorld(options: LocalWorldOptions): Promise<WorldHandle | LocalWorldHandle>;
  /**
   * Builds a twin from the app's sources, untrusted (default `buildTwin(entry, { trusted: false })`
   * of sdk/twin/build.ts, loaded on demand: its manifest read and checked in `lane`).
   */
  buildTwin?(entry: string, options: PathBuildOptions): Promise<TwinBundle>;
}

/** How a twin of the world file's `path:` is built. */
export interface PathBuildOptions {
  /** Names it in errors: its `path:` as written. */
  label: string;
  /** The other vendor ids the world serves: claiming one is refused. */
  served: string[];
  /** Where its manifest is read (QuickJS): one lane for the world file's builds. */
  lane?: UntrustedLane;
}

export interface ServingWorld {
  server: SingleWorldServer;
  tokens: TokenFile;
  /** Absolute. */
  dir: string;
  org: string;
  world: string;
  twins: string[];
  /** The request budget in force, if any. */
  budget: { size: number; windowMs: number } | null;
  /** `--inline` was given (it is no longer needed). */
  inlineGiven: boolean;
  /** Twinned hosts the world's CA may not vouch for (a CA minted by an older kit, before a twin with a new host). */
  uncoveredHosts: string[];
  /** The world's CA was minted by a kit from before name constraints: it may vouch for any host. */
  caUnconstrained: boolean;
  /** Issuers whose passes it takes. */
  trustedIssuers: string[];
  /** Where the key that seals the twins' credentials came from: its file, or `SEALING_KEY`. */
  sealingKeyFrom: string;
  /** The world file served (absolute), or null. */
  worldFile: string | null;
  /** The twins rebuilt on an edit (`--dev`). */
  watching: string[];
}

export const SERVE_FLAGS: FlagSpec[] = [
  { name: 'port', kind: 'string' },
  { name: 'host', kind: 'string' },
  { name: 'org', kind: 'string' },
  { name: 'world', kind: 'string' },
  { name: 'twins', kind: 'string' },
  { name: 'proxy-port', kind: 'string' },
  { name: 'budget', kind: 'string' },
  { name: 'dev', kind: 'boolean' },
  // No longer needed (the world runs in the server's thread by default); accepted and noted.
  { name: 'inline', kind: 'boolean' },
  TRUST_FLAG,
  { name: 'help', kind: 'boolean', short: 'h' },
];

export const SERVE_USAGE = `Usage: kit world serve [dir] [--port N] [--host H] [--org O] [--world W] [--twins a,b] [--proxy-port N] [--budget N/10s|off]
                       [--trust I]... [--dev]

Serves one world from <dir>. Its state lives in <dir>/.kit/world/ and its two tokens in
<dir>/.kit/token (minted on first start, kept across restarts). When <dir> holds a world
file, ${WORLD_FILE_NAME}, it names the twins (built-in ones, and the app's own by path),
each twin's scenario file and its checks (docs/world-file.md).

  dir           the world's directory (default: the current directory)
  --port N      port to listen on (default ${DEFAULT_PORT}; 0 picks a free port)
  --host H      address to listen on (default ${DEFAULT_HOST}; 0.0.0.0 for every interface)
  --org O       the org in the world's URL (default ${DEFAULT_ORG})
  --world W     the world's name (default: the directory's name, lower-cased)
  --twins a,b   the built-in twins to serve (default: all of them); refused with a world
                file, whose twins: key names them
  --dev         rebuild a twin of the world file's path: on every edit of its sources; the
                next request uses the new build, and a build error keeps the last good one
  --proxy-port N  the world's HTTPS proxy for apps in any language (default: port + 1;
                0 picks a free port). Its CA lives in <dir>/.kit/ca/.
  --budget B    the world's request budget: <requests>/<window> (100000/10s, 600/m), answered
                429 with Retry-After past it; default off (a world served alone does not
                throttle its owner's load test)
${trustUsage(16)}
  -h, --help    this help

The built-in twins run in the server's thread. Code the server does not trust (scenario
scripts, checks) runs in worker threads under a watchdog: a call that outlives its 2.5 s
limit is ended there, and the rest of the world keeps answering.

The twins answer at http://<host>:<port>/<org>/<world>/<vendor>/... with the vendors' own
paths, and the world's endpoints at http://<host>:<port>/-/<org>/<world>/... . Send the
printed token in x-kit-token, or to a twin as its API key (Bearer, token, Basic
password or user name).
The read token opens GET and HEAD on the twins and the world's read endpoints.
Ctrl-C (SIGINT) or SIGTERM stops it: requests in flight finish and commits are flushed.`;

/** Parses `kit world serve`'s arguments (and `TRUSTED_ISSUERS` from `env`); `help` when asked for help. Throws `UsageError`. */
export function parseServeArgs(argv: readonly string[], env: Record<string, string | undefined> = process.env): ServeOptions | 'help' {
  const { positionals, flags, lists } = parseArgs(argv, SERVE_FLAGS);
  if (flags['help'] === true) return 'help';
  if (positionals.length > 1) throw new UsageError(`one directory at most, got ${positionals.length}: ${positionals.join(' ')}`);
  const value = (name: string): string | undefined => {
    const v = flags[name];
    return typeof v === 'string' ? v : undefined;
  };
  const options: ServeOptions = {
    dir: positionals[0] ?? '.',
    port: value('port') === undefined ? DEFAULT_PORT : parsePort(value('port') as string),
    host: value('host') ?? DEFAULT_HOST,
    org: checkName('--org', value('org') ?? DEFAULT_ORG),
  };
  if (value('org') !== undefined) options.orgGiven = true;
  if (flags['dev'] === true) options.dev = true;
  if (options.host === '') throw new UsageError('--host needs an address');
  const trusted = parseTrust(lists['trust'], env);
  if (trusted.length > 0) options.trustedIssuers = trusted;
  const outboundProxy = outboundProxyFromEnv(env);
  if (outboundProxy !== undefined) options.outboundProxy = outboundProxy;
  const proxyPort = value('proxy-port');
  if (proxyPort !== undefined) {
    try {
      options.proxyPort = parsePort(proxyPort);
    } catch {
      throw new UsageError(`--proxy-port must be a number from 0 to 65535, got "${proxyPort}"`);
    }
  }
  const world = value('world');
  if (world !== undefined) options.world = checkName('--world', world);
  if (flags['inline'] === true) options.inlineGiven = true;
  const budget = value('budget');
  if (budget !== undefined) {
    let parsed: ReturnType<typeof parseBudget>;
    try {
      parsed = parseBudget(budget);
    } catch (e) {
      throw new UsageError(`--budget: ${(e as Error).message}`);
    }
    if (parsed !== false) options.budget = parsed;
  }
  const twins = value('twins');
  if (twins !== undefined) {
    options.twins = parseList(twins);
    if (options.twins.length === 0) throw new UsageError('--twins needs at least one twin name');
  }
  return options;
}

function checkName(flag: string, raw: string): string {
  const name = raw.toLowerCase();
  if (!NAME_PATTERN.test(name)) {
    throw new UsageError(`${flag} must be letters, digits and dashes (1 to 63, starting with a letter or digit), got "${raw}"`);
  }
  return name;
}

/** A world name from a directory name: lower case, other characters folded to dashes. */
export function worldNameFromDir(dir: string): string {
  const name = basename(resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  if (!NAME_PATTERN.test(name)) {
    throw new UsageError(`cannot make a world name from the directory "${basename(resolve(dir))}"; pass --world <name>`);
  }
  return name;
}

/** Opens the world in `options.dir` and serves it. The caller stops it with `server.close()`. */
export async function serveWorld(options: ServeOptions, deps: ServeDeps): Promise<ServingWorld> {
  const dir = resolve(options.dir);
  const info = await stat(dir).catch(() => null);
  if (info === null || !info.isDirectory()) {
    throw new KitError('not_found', `no directory ${dir}; create it first, or name another one`);
  }
  const worldFile = readWorldFile(dir);
  if (worldFile !== null && options.twins !== undefined) {
    throw new UsageError(`--twins does not apply to a world file: ${worldFile.file} names the world's twins (its twins: key)`);
  }
  // The command line wins over the file, as for anything said twice.
  const world = options.world ?? worldFile?.world ?? worldNameFromDir(dir);
  const org = options.orgGiven === true ? options.org : (worldFile?.org ?? options.org);
  const report = options.report ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const trustedIssuers = options.trustedIssuers ?? [];
  const passes = passVerifierFor(trustedIssuers);
  // A corrupt token file stops us before anything is opened.
  const existing = await readTokenFile(dir);

  const builtins = await deps.loadTwins();
  let bundles: TwinBundle[];
  const builder = pathTwinBuilder(deps);
  if (worldFile !== null) {
    try {
      bundles = await worldFileTwins(worldFile, builtins, builder);
    } finally {
      // Closed between builds: a --dev rebuild starts it again.
      await builder.close();
    }
  } else {
    const names = options.twins ?? [...builtins.keys()].sort();
    const unknown = names.filter((n) => !builtins.has(n));
    if (unknown.length > 0) {
      const known = [...builtins.keys()].sort().join(', ') || 'none';
      throw new UsageError(`unknown twin${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; the built-in twins are: ${known}`);
    }
    bundles = names.map((n) => builtins.get(n) as TwinBundle);
  }
  const names = bundles.map((b) => b.vendor);

  // Before the world opens: a corrupt CA stops us with nothing to close. A new CA may vouch
  // for every built-in twin's host, served now or later from this folder, and nothing else.
  const builtinHosts = [...builtins.values(), ...bundles.filter((b) => b.origin !== undefined)].flatMap((b) => b.manifest.models.hosts);
  const ca = await loadOrCreateCa(dir, { label: `kit world ${org}/${world}`, hosts: [...new Set(builtinHosts)] });
  const uncoveredHosts = bundles.flatMap((b) => b.manifest.models.hosts).filter((h) => !ca.covers(h));
  // Kept apart from the world's state (.kit/world/): an export or a copy of the state carries no key.
  const sealing = await loadOrCreateSealingKey(join(dir, '.kit', 'sealing-key'));
  const proxy = await loadOutboundProxy(options.outboundProxy);
  // This machine's own world: its roots and links may name loopback (another local world plays the vendor).
  const roots = { sealingKey: sealing.key, loopback: true, ...(proxy !== undefined ? { proxy } : {}) };
  const opening: LocalWorldOptions = { dir, org, world, twins: bundles, roots };
  if (worldFile !== null) {
    opening.colocate = colocatedFiles(worldFile);
    opening.report = report;
  }
  const opened = await deps.openWorld(opening);
  // --dev: each twin from sources rebuilt on an edit, until the world closes.
  const devTwins = options.dev === true && worldFile !== null ? worldFile.twins.filter((t) => t.entry !== undefined).map(devTwinOf) : [];
  let dev: { close(): Promise<void> } | null = null;
  if (devTwins.length > 0) {
    const target = opened as LocalWorldHandle;
    if (target.replaceTwin === undefined || target.twinBuildFailed === undefined) {
      await opened.close();
      throw new Error('this world cannot swap a twin while it serves (--dev needs the world in the server\'s thread)');
    }
    const served = worldFile!.twins.map((t) => t.vendor);
    const watch = watchTwinSources(devTwins, { replaceTwin: (b) => target.replaceTwin!(b), twinBuildFailed: (v, p) => target.twinBuildFailed!(v, p) }, async (t) => untrusted(await builder.build(t.entry, t.path, served.filter((v) => v !== t.vendor)), t.path), report, dir);
    dev = {
      async close() {
        watch.close();
        await builder.close();
      },
    };
  }
  const handle: WorldHandle = dev === null ? opened : closingAlso(opened, dev);
  const tokens = existing ?? { url: '', ...mintTokens() };
  // Sessions, keys and spent passes outlive a restart, beside the world (host/core/access/).
  const accessStorage = openLmdbStorage(join(dir, '.kit', 'access'));
  let server: SingleWorldServer;
  try {
    server = await startSingleWorldServer({
      world: handle,
      org,
      worldName: world,
      tokens,
      twins: bundles.map(twinScopesOf),
      host: options.host,
      port: options.port,
      ca,
      accessStorage,
      ...(options.budget !== undefined ? { budget: options.budget } : {}),
      ...(options.proxyPort !== undefined ? { proxyPort: options.proxyPort } : {}),
      ...(passes !== null ? { passes } : {}),
    });
  } catch (e) {
    await handle.close();
    await accessStorage.close();
    const why = e instanceof Error ? e.message : String(e);
    throw new Error(`${why}${options.port !== 0 ? '; pass --port 0 for a free port' : ''}`);
  }
  const file: TokenFile = { url: server.worldUrl, token: tokens.token, readToken: tokens.readToken };
  if (existing === null || existing.url !== file.url) {
    try {
      await writeTokenFile(dir, file);
    } catch (e) {
      await server.close();
      throw e;
    }
  }
  return { server, tokens: file, dir, org, world, twins: names, worldFile: worldFile?.file ?? null, watching: devTwins.map((t) => t.vendor), budget: options.budget ?? null, inlineGiven: options.inlineGiven === true, uncoveredHosts, caUnconstrained: ca.hosts === null, trustedIssuers, sealingKeyFrom: sealing.from };
}

/** What `serve` prints once it listens. */
export function describeServing(s: ServingWorld): string[] {
  const { server, tokens } = s;
  return [
    `kit: serving world "${s.world}" (org ${s.org}) with ${s.twins.length === 0 ? 'no twins' : `twins: ${s.twins.join(', ')}`}`,
    '',
    ...(s.worldFile !== null ? [`  world file   ${s.worldFile}`] : []),
    ...(s.watching.length > 0 ? [`  dev          rebuilding ${s.watching.join(', ')} on every edit of ${s.watching.length > 1 ? 'their' : 'its'} sources`] : []),
    `  world URL    ${server.worldUrl}`,
    `  world API    ${server.worldApi}`,
    ...(server.pageUrl !== null ? [`  world page   ${server.pageUrl}/  (open it in a browser on this machine)`] : []),
    ...(server.proxy !== null ? [`  proxy        ${server.proxy.url}  (HTTPS_PROXY, the token as password; CA in ${join(s.dir, '.kit', 'ca', 'ca.pem')})`] : []),
    `  token        ${tokens.token}`,
    `  read token   ${tokens.readToken}`,
    `  state        ${join(s.dir, '.kit', 'world')}/`,
    `  tokens file  ${tokenFilePath(s.dir)}`,
    `  sealing key  ${s.sealingKeyFrom}  (seals the twins' real credentials; keep it apart from copies of the state)`,
    `  budget       ${s.budget === null ? 'off (--budget N/10s sets one)' : `${describeBudget(s.budget)}, then 429 with Retry-After`}`,
    `  passes       ${describeTrust(s.trustedIssuers)}`,
    ...(s.inlineGiven ? ['  note         --inline is no longer needed: the world runs in the server\'s thread by default, and scenario scripts and checks in worker threads under a watchdog'] : []),
    ...(s.uncoveredHosts.length > 0
      ? [`  note         the world's CA may not vouch for ${s.uncoveredHosts.join(', ')}: the proxy cannot serve ${s.uncoveredHosts.length > 1 ? 'them' : 'it'}; move ${join(s.dir, '.kit', 'ca')} away to mint a CA that may (apps that trust the old one must then trust the new one)`]
      : []),
    ...(s.caUnconstrained
      ? [`  note         the world's CA, minted by an older kit, may vouch for any host to apps that trust it; move ${join(s.dir, '.kit', 'ca')} away to mint one limited to the twins' hosts`]
      : []),
    '',
    'Try:',
    `  curl -H "x-kit-token: ${tokens.token}" ${server.worldApi}/clock`,
    `  kit world attach ${server.worldUrl} --token ${tokens.token} -- node app.js`,
    ...(s.twins[0] !== undefined ? [`  curl -H "x-kit-token: ${tokens.token}" ${server.worldUrl}/${s.twins[0]}/twin`] : []),
    '',
    'Ctrl-C stops the server.',
  ];
}

/** The bundles a world file names, in its order: built-in twins by vendor id, the app's own built from `path`. */
async function worldFileTwins(file: WorldFile, builtins: Map<string, TwinBundle>, build: PathBuilder): Promise<TwinBundle[]> {
  const out: TwinBundle[] = [];
  const fail = (twin: WorldFileTwin, field: string, line: number, problem: string): never => {
    const where = field === '' ? `twins.${twin.vendor}` : `twins.${twin.vendor}.${field}`;
    throw new KitError('invalid_world_file', `${file.file}:${line}: ${where}: ${problem}`, { file: file.file, line, field: where });
  };
  const vendors = file.twins.map((t) => t.vendor);
  for (const twin of file.twins) {
    let bundle: TwinBundle;
    if (twin.kind === 'builtin') {
      const builtin = builtins.get(twin.vendor);
      if (builtin === undefined) {
        const known = [...builtins.keys()].sort().join(', ') || 'none';
        fail(twin, '', twin.line, `no built-in twin "${twin.vendor}" (the built-in twins are: ${known}); a twin of your own is named by path:`);
      }
      bundle = builtin!;
    } else if (twin.kind === 'path') {
      const entry = twin.entry!;
      try {
        bundle = untrusted(await build.build(entry.path, entry.written, vendors.filter((v) => v !== twin.vendor)), entry.written);
      } catch (e) {
        return fail(twin, 'path', entry.line, `the twin does not build: ${describeBuildProblem(buildProblem(e, file.dir))}`);
      }
      if (bundle.vendor !== twin.vendor) fail(twin, '', twin.line, `the twin at "${entry.written}" is vendor "${bundle.vendor}" (its manifest); the key must be its vendor id`);
    } else {
      bundle = await componentTwin(twin, fail);
    }
    out.push(bundle);
  }
  return out;
}

/** A world file's `component:` twin (runtime/component/: transpiled with jco, loaded when a world file names one). */
async function componentTwin(twin: WorldFileTwin, fail: (twin: WorldFileTwin, field: string, line: number, problem: string) => never): Promise<TwinBundle> {
  const component = twin.component!;
  const { loadComponentTwin: load } = await import('../../runtime/component/index.js');
  let bundle: TwinBundle;
  try {
    bundle = await load(component.path, { label: component.written });
  } catch (e) {
    return fail(twin, 'component', component.line, `the component does not load: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (bundle.vendor !== twin.vendor) fail(twin, '', twin.line, `the component at "${component.written}" is vendor "${bundle.vendor}"; the key must be its vendor id`);
  return { ...bundle, trusted: false, origin: { kind: 'component', path: component.written } };
}

/** Builds the world file's path twins, their manifests read in one lane of its own (started on the first build). */
interface PathBuilder {
  build(entry: string, label: string, served: string[]): Promise<TwinBundle>;
  close(): Promise<void>;
}

function pathTwinBuilder(deps: ServeDeps): PathBuilder {
  let lane: UntrustedLane | undefined;
  const laneOf = async (): Promise<UntrustedLane> => {
    if (lane === undefined) {
      const { SandboxLane } = await import('../../runtime/lane/lane.js');
      lane = new SandboxLane({ name: 'kit world serve: twin builds' });
    }
    return lane;
  };
  return {
    async build(entry, label, served) {
      const options: PathBuildOptions = { label, served, lane: await laneOf() };
      if (deps.buildTwin !== undefined) return deps.buildTwin(entry, options);
      // `trusted: false`: the manifest is read in the lane, never in V8 (sdk/twin/build.ts).
      const { buildTwin } = await import('../twin/build.js');
      return buildTwin(entry, { ...options, trusted: false });
    },
    async close() {
      const closing = lane;
      lane = undefined;
      await closing?.close();
    },
  };
}

/** A twin from the app's sources: never trusted (it runs in QuickJS, in the world's lane). */
function untrusted(bundle: TwinBundle, path: string): TwinBundle {
  return { ...bundle, trusted: false, origin: { kind: 'path', path } };
}

function devTwinOf(twin: WorldFileTwin): DevTwin {
  const entry = twin.entry!;
  return { vendor: twin.vendor, entry: entry.path, folder: entry.folder, path: entry.written };
}

function colocatedFiles(file: WorldFile): ColocatedFiles {
  const scenarios: Record<string, string> = {};
  const checks: ColocatedFiles['checks'] = [];
  for (const t of file.twins) {
    if (t.scenario !== undefined) scenarios[t.vendor] = t.scenario.path;
    for (const c of t.checks) checks.push({ name: c.name, path: c.path });
  }
  return { scenarios, checks };
}

/** The world, closing `also` first when it closes. */
function closingAlso(world: WorldHandle, also: { close(): Promise<void> }): WorldHandle {
  const wrapped: WorldHandle = {
    name: world.name,
    code: world.code,
    handle: (request) => world.handle(request),
    async close() {
      await also.close();
      await world.close();
    },
  };
  if (world.streamCall !== undefined) wrapped.streamCall = (call) => world.streamCall!(call);
  return wrapped;
}
