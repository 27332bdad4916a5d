/**
 * The credential check alone, in-process (issue 33, "Measure"): tinybench over the host core of
 * the single-world server (`createSingleWorldCore`, host/single-world.ts) with its sessions and
 * keys in LMDB as `kit world serve` keeps them (`openLmdbStorage(<dir>/.kit/access)`), and a
 * world that answers at once (`constantWorld`), so that nothing but the host's own work is timed:
 *
 * - head: `handler.head(h)`, the synchronous judgement of a request's head (origin, path, world,
 *   credential, scope, budget, the headers handed on), for the same read with each credential;
 * - dispatch: `core.dispatch(...)`, the head, then the (constant) world's answer;
 * - lookup: the credential's lookup alone, `WorldAccess.grantOf` (token, key) or `.session`
 *   (a cookie's id), on a `WorldAccess` over the same storage;
 * - parts: what a key or session lookup is made of — SHA-256 of the presented value as hex
 *   (world-access.ts `digestHex`) and as bytes (credentials.ts, the token's), and the LMDB read of
 *   the stored record (`storage.get`).
 *
 * Each round runs every task once (tinybench, `time` ms each), the order rotated between rounds;
 * each ratio is taken against the token's task of the same group in the same round (by median
 * latency), and the medians over the rounds are reported.
 */
import * as nodeCrypto from 'node:crypto';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import { constantWorld } from '../../host/echo-world.js';
import { localOriginRule } from '../../host/core/access/origins.js';
import { WorldAccess } from '../../host/core/access/world-access.js';
import type { HttpHead } from '../../host/core/types.js';
import { createSingleWorldCore, type SingleWorldCore } from '../../host/single-world.js';
import { openLmdbStorage, type LmdbStorage } from '../../runtime/store/lmdb.js';
import type { Key } from '../../runtime/store/types.js';
import { median, round } from '../host/client.js';
import { CREDENTIALS, CREDENTIAL_WHAT, prepareCredentials, type Answer, type BenchWorld, type CredentialHeaders, type CredentialKind } from './credentials.js';

export interface CoreOptions {
  dir: string;
  /** tinybench's `time` per task, ms (a warm-up of a fifth of it first). */
  timeMs: number;
  rounds: number;
}

export type CoreGroup = 'head' | 'dispatch' | 'lookup' | 'parts';

export interface CoreRow {
  group: CoreGroup;
  task: string;
  what: string;
  /** Medians over the rounds of tinybench's mean and median latency, µs per call. */
  meanUs: number | null;
  medianUs: number | null;
  /**
   * × the group's baseline (its first task) in the same round, by tinybench's median latency (the
   * mean carries whatever preempted a call on a shared machine); median over the rounds.
   */
  ratio: number | null;
  /** Above the baseline: median µs − the baseline's median µs, median over the rounds. */
  extraUs: number | null;
  samples: number;
}

export interface CoreFigures {
  command: string;
  timeMs: number;
  rounds: number;
  rows: CoreRow[];
}

const TOKEN = `tok_${'b'.repeat(43)}`;
const READ_TOKEN = `tok_r_${'c'.repeat(43)}`;
const PORT = 4440;
const ORG = 'local';
const WORLD = 'bench';

const oneShot = (nodeCrypto as { hash?: (algorithm: string, data: string, encoding: 'buffer') => Buffer }).hash;

interface Task {
  group: CoreGroup;
  name: string;
  what: string;
  fn: () => unknown;
}

/** The core of a single-world server with its access in LMDB, the credentials made, and what the tasks call. */
export interface CoreUnderBench {
  core: SingleWorldCore;
  storage: LmdbStorage;
  world: BenchWorld;
  credentials: CredentialHeaders;
  /** A WorldAccess over the same storage and world: it reads what the core's made. */
  access: WorldAccess;
  keyOf(kind: 'read-key' | 'write-key'): string;
  sessionIdOf(kind: 'session' | 'read-key-session'): string;
  /** A fresh head of the read with `kind`'s headers, as the socket layer hands it over (the core rewrites a head's headers in place). */
  head(kind: CredentialKind): HttpHead;
}

/** What the set-up takes from a built tree: this one's by default, another's for an A/B (ab.ts). */
export interface TreeModules {
  createSingleWorldCore: typeof createSingleWorldCore;
  constantWorld: typeof constantWorld;
  localOriginRule: typeof localOriginRule;
  WorldAccess: typeof WorldAccess;
  openLmdbStorage: typeof openLmdbStorage;
}

const THIS_TREE: TreeModules = { createSingleWorldCore, constantWorld, localOriginRule, WorldAccess, openLmdbStorage };

/** The same modules from the built tree at `root` (its `dist/`), taken to have the same shapes as this tree's. */
export async function treeModules(root: string): Promise<TreeModules> {
  const at = async <T>(path: string): Promise<T> => (await import(pathToFileURL(join(root, 'dist', path)).href)) as T;
  return {
    createSingleWorldCore: (await at<{ createSingleWorldCore: TreeModules['createSingleWorldCore'] }>('host/single-world.js')).createSingleWorldCore,
    constantWorld: (await at<{ constantWorld: TreeModules['constantWorld'] }>('host/echo-world.js')).constantWorld,
    localOriginRule: (await at<{ localOriginRule: TreeModules['localOriginRule'] }>('host/core/access/origins.js')).localOriginRule,
    WorldAccess: (await at<{ WorldAccess: TreeModules['WorldAccess'] }>('host/core/access/world-access.js')).WorldAccess,
    openLmdbStorage: (await at<{ openLmdbStorage: TreeModules['openLmdbStorage'] }>('runtime/store/lmdb.js')).openLmdbStorage,
  };
}

export async function setUpCore(dir: string, tree: TreeModules = THIS_TREE): Promise<CoreUnderBench> {
  const { createSingleWorldCore, constantWorld, localOriginRule, WorldAccess, openLmdbStorage } = tree;
  const storage = openLmdbStorage(join(dir, '.kit', 'access'));
  try {
    const core = createSingleWorldCore({
      world: constantWorld('{"id":"grt_bench"}'),
      org: ORG,
      worldName: WORLD,
      tokens: { token: TOKEN, readToken: READ_TOKEN },
      twins: [{ vendor: 'hello', requestScopes: [] }],
      accessStorage: storage,
    });
    core.publish({ baseUrl: `http://127.0.0.1:${PORT}`, proxyUrl: null, ca: null, worldOrigins: localOriginRule('127.0.0.1', PORT) });
    const world: BenchWorld = {
      name: `${ORG}/${WORLD}`,
      token: TOKEN,
      urlPath: `/${ORG}/${WORLD}`,
      apiPath: `/-/${ORG}/${WORLD}`,
      host: `127.0.0.1:${PORT}`,
      originHost: `${WORLD}--${ORG}.localhost:${PORT}`,
      readPath: `/${ORG}/${WORLD}/hello/v1/greetings/grt_bench`,
    };
    const send = async (method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> => {
      const a = await core.dispatch({ method, url: path, headers, ...(body !== undefined ? { body } : {}) });
      return { status: a.status, headers: a.headers, text: typeof a.body === 'string' ? a.body : new TextDecoder().decode(a.body) };
    };
    const credentials = await prepareCredentials(send, world);
    return {
      core,
      storage,
      world,
      credentials,
      // The same prefix and tokens: no reset of what the core's made.
      access: new WorldAccess(world.name, { token: TOKEN, readToken: READ_TOKEN }, storage),
      keyOf: (kind) => credentials[kind]['x-kit-token']!,
      sessionIdOf: (kind) => credentials[kind].cookie!.slice('kit_session='.length),
      head: (kind) => {
        // As the uWS adapter builds a head's headers (host/node/http/uws.ts): a prototype-less object, filled in.
        const headers = Object.create(null) as Record<string, string>;
        for (const [name, value] of Object.entries(credentials[kind])) headers[name] = value;
        return { method: 'GET', path: world.readPath, query: '', headers, receivedAt: Date.now() };
      },
    };
  } catch (e) {
    await storage.close();
    throw e;
  }
}

export async function benchCore(o: CoreOptions, log: (line: string) => void): Promise<CoreFigures> {
  const { core, storage, world, credentials, access, keyOf, sessionIdOf, head } = await setUpCore(o.dir);
  try {
    const keyDigest = createHash('sha256').update(keyOf('read-key')).digest('hex');
    const keyRecord: Key = ['#access', world.name, 'k', keyDigest];
    if (storage.get(keyRecord) === undefined) throw new Error('the read key is not where world-access.ts keeps it');

    const tasks: Task[] = [];
    for (const kind of CREDENTIALS) {
      tasks.push({
        group: 'head',
        name: kind,
        what: CREDENTIAL_WHAT[kind],
        fn: () => {
          if (typeof core.handler.head(head(kind)) !== 'function') throw new Error(`the head with ${kind} was refused`);
        },
      });
    }
    for (const kind of CREDENTIALS) {
      const sent = credentials[kind];
      tasks.push({
        group: 'dispatch',
        name: kind,
        what: CREDENTIAL_WHAT[kind],
        fn: async () => {
          const a = await core.dispatch({ method: 'GET', url: world.readPath, headers: sent });
          if (a.status !== 200) throw new Error(`dispatch with ${kind} answered ${a.status}`);
        },
      });
    }
    const lookups: [CredentialKind, string, () => unknown][] = [
      ['token', 'WorldAccess.grantOf(token)', () => access.grantOf(TOKEN, Date.now())],
      ['read-key', 'WorldAccess.grantOf(read key)', () => access.grantOf(keyOf('read-key'), Date.now())],
      ['write-key', 'WorldAccess.grantOf(write key)', () => access.grantOf(keyOf('write-key'), Date.now())],
      ['session', "WorldAccess.session(the write session's id)", () => access.session(sessionIdOf('session'), Date.now())],
      ['read-key-session', "WorldAccess.session(the read key's session's id)", () => access.session(sessionIdOf('read-key-session'), Date.now())],
    ];
    for (const [name, what, call] of lookups) {
      tasks.push({
        group: 'lookup',
        name,
        what,
        fn: () => {
          if (call() === null) throw new Error(`${what} found nothing`);
        },
      });
    }
    const key = keyOf('read-key');
    if (oneShot === undefined) throw new Error('crypto.hash is missing (Node 20.12 or later)');
    tasks.push(
      { group: 'parts', name: 'sha256-bytes', what: "SHA-256 of the key, bytes (crypto.hash: the token's check, credentials.ts)", fn: () => oneShot('sha256', key, 'buffer') },
      { group: 'parts', name: 'sha256-hex', what: "SHA-256 of the key, hex (createHash().update().digest('hex'): world-access.ts)", fn: () => createHash('sha256').update(key).digest('hex') },
      { group: 'parts', name: 'storage-get', what: "LMDB storage.get of the key's record (msgpack decoded)", fn: () => storage.get(keyRecord) },
    );

    const perRound = new Map<string, { mean: number; median: number; samples: number }[]>();
    const id = (t: { group: string; name: string }): string => `${t.group}/${t.name}`;
    for (let r = 0; r < o.rounds; r++) {
      const bench = new Bench({ time: o.timeMs, warmupTime: Math.max(10, Math.round(o.timeMs / 5)) });
      // Rotated, so that no task always runs first (or right after a collection of another's garbage).
      const shift = (r * 5) % tasks.length;
      for (const t of [...tasks.slice(shift), ...tasks.slice(0, shift)]) bench.add(id(t), t.fn);
      await bench.run();
      for (const t of tasks) {
        const res = bench.tasks.find((x) => x.name === id(t))?.result;
        if (res === undefined || !('latency' in res)) throw new Error(`tinybench has no result for ${id(t)}${res !== undefined && 'error' in res ? `: ${String(res.error)}` : ''}`);
        perRound.set(id(t), [...(perRound.get(id(t)) ?? []), { mean: res.latency.mean * 1000, median: res.latency.p50 * 1000, samples: res.latency.samplesCount }]);
      }
      const line = (['head', 'lookup'] as const).map((g) => `${g}: ${tasks.filter((t) => t.group === g).map((t) => `${t.name} ${perRound.get(id(t))!.at(-1)!.median.toFixed(2)}`).join(', ')}`).join('; ');
      log(`bench access core: round ${r + 1}/${o.rounds}, median µs per call — ${line}`);
    }

    const rows: CoreRow[] = [];
    for (const t of tasks) {
      const xs = perRound.get(id(t))!;
      const base = perRound.get(id(tasks.find((b) => b.group === t.group)!))!;
      rows.push({
        group: t.group,
        task: t.name,
        what: t.what,
        meanUs: round(median(xs.map((x) => x.mean)), 3),
        medianUs: round(median(xs.map((x) => x.median)), 3),
        ratio: round(median(xs.map((x, i) => x.median / base[i]!.median)), 2),
        extraUs: round(median(xs.map((x, i) => x.median - base[i]!.median)), 3),
        samples: xs.reduce((n, x) => n + x.samples, 0),
      });
    }
    return {
      command: 'createSingleWorldCore({ world: constantWorld(), accessStorage: openLmdbStorage(<dir>/.kit/access), … }): handler.head / dispatch, in-process',
      timeMs: o.timeMs,
      rounds: o.rounds,
      rows,
    };
  } finally {
    await storage.close();
  }
}
