/**
 * The contract between a host (which owns sockets and authentication) and a world
 * runner (which owns everything else). A host authenticates, then hands the runner a
 * plain request; the same call is made in-process by tests.
 */

export type Scope = 'read' | 'write';

export interface WorldRequest {
  /** `api`: `{world_api}/<path>`; `vendor`: `{world_url}/<path>` (path starts with `/<vendor>/`). */
  surface: 'api' | 'vendor';
  /** Upper case. */
  method: string;
  /** The path below the world's prefix, starting with `/`, percent-encoding intact, no query. */
  path: string;
  /** The raw query string, without `?`. */
  query: string;
  /** Lower-case header names. Repeated headers joined with `, `. */
  headers: Record<string, string>;
  body?: Uint8Array;
  /** What the credential opens. The host has already refused what the scope forbids at its level. */
  scope: Scope;
  /** What opened it, where the host says: the world's token, a named key, a browser session, or nothing (a keyless endpoint). */
  credential?: 'token' | 'key' | 'session' | 'none';
  /** For a browser session: the person it was opened for (`this machine` on a local world), as an approval signs. */
  who?: string;
  /** The host's id for this request (`x-request-id` style); the runner may use its own vendor id. */
  requestId: string;
  /** Epoch ms when the host received the request (for the request report). */
  receivedAt: number;
}

export interface WorldResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array | string;
  /**
   * A fault a scenario asked for: `reset` closes the connection without an answer.
   * `delayMs` is waited by the host before answering (it never blocks the world).
   */
  fault?: 'reset';
  delayMs?: number;
}

/** One served world, as a host sees it. */
export interface WorldHandle {
  readonly name: string;
  /** The code version this world runs, answered in `x-kit-world-code`. */
  readonly code: string;
  handle(request: WorldRequest): Promise<WorldResponse>;
  /**
   * Drives one connection of a stream twin (`{world_api}/streams/<id>`): the host holds the
   * connection, its bytes and its state; the world runs the twin's stream handler. Absent on a
   * world that serves no streams. Rejects with KitError `unknown_stream`, `handler_error`, ….
   */
  streamCall?(call: StreamCall): Promise<StreamResult>;
  /** Finishes what is in flight and flushes commits. */
  close(): Promise<void>;
}

/** One event of a stream connection, as the host hands it to the world. */
export interface StreamCall {
  /** The stream id: the vendor id of a twin with a stream handler. */
  twin: string;
  /** The host's id for the connection. */
  connId: string;
  event: 'open' | 'data' | 'close';
  /** What arrived (`data` only). */
  bytes?: Uint8Array;
  /** The state the last call of this connection answered; null on `open`. JSON data. */
  state: unknown;
}

/** Framing hint: call `data` once the waiting bytes, read after `tail`, hold `delimiter`, or `max` bytes wait. */
export interface StreamUntilBytes {
  delimiter: Uint8Array;
  tail: Uint8Array;
  max: number | null;
}

export interface StreamResult {
  /** Bytes to send to the client (empty: nothing). */
  send: Uint8Array;
  /** Close the connection once `send` is out. */
  close: boolean;
  /** The connection's state for its next call. */
  state: unknown;
  until: StreamUntilBytes | null;
}

/** The manifest a twin bundle answers from `__kit_manifest()`. */
export interface TwinManifestJson {
  vendor: string;
  version: string;
  protocol: string;
  models: { hosts: string[]; resources: string[]; endpointEnv?: string[] };
  requestScopes: 'read'[];
  routes: { name: string; match: import('../../sdk/twin/types.js').Matcher }[];
  stores: string[];
  moves: string[];
  scenarios: boolean;
  /** true when the twin has a stream handler (its clients speak TCP through `…/streams/<vendor>`). */
  stream?: boolean;
  /** Record types, or fields of them, a caller that may only read never sees (runner/secrets.ts). */
  secrets?: Record<string, true | string[]>;
  /** Present when the twin can keep a copy of a real vendor account (`TwinRoot`): its refresh defaults and its webhook signature scheme. */
  root?: { refresh: { atMost?: string; every?: string }; ingest?: 'stripe' | 'github' };
}

/** A built twin: its sandbox script and its manifest. */
export interface TwinBundle {
  vendor: string;
  /** The sandbox script; empty for a component twin. */
  source: string;
  manifest: TwinManifestJson;
  /** Code the host trusts (a built-in twin): run in V8 rather than the QuickJS sandbox, unless the runner is told otherwise. */
  trusted?: boolean;
  /** Where its code came from, for the twin's status (`source`); default built-in. */
  origin?: { kind: TwinSourceKind; path?: string };
  /**
   * A WebAssembly component twin (runtime/component/, `loadComponentTwin`): run in the world's
   * lane in an instance of its own, never trusted. `source` is then empty.
   */
  component?: import('../component/types.js').ComponentCode;
}

export type TwinSourceKind = 'builtin' | 'path' | 'component' | 'installed';

/** Why a twin's sources did not build: where esbuild (or the manifest check) says. */
export interface TwinBuildProblem {
  message: string;
  file?: string;
  line?: number;
  column?: number;
}

/** `source` of a twin's status: where its code came from and, for a twin built from sources, its last build. */
export interface TwinSourceStatus {
  kind: TwinSourceKind;
  path?: string;
  build?: { ok: boolean; at: string; error?: TwinBuildProblem };
}

/** A world file's colocated files (docs/world-file.md), each path absolute. */
export interface ColocatedFiles {
  /** Per twin, its scenario file (`colocate.scenarioPath`). */
  scenarios: Record<string, string>;
  /** Checks by path, each named by its file name. */
  checks: { name: string; path: string }[];
}

/** A local world opened in this thread, as `kit world serve` drives it. */
export interface LocalWorldHandle extends WorldHandle {
  /** Swaps a served twin's code (`WorldRunner.replaceTwin`); absent on a world in a worker thread. */
  replaceTwin?(bundle: TwinBundle): Promise<void>;
  /** A twin's sources failed to build: shown in its status; absent on a world in a worker thread. */
  twinBuildFailed?(vendor: string, problem: TwinBuildProblem): void;
}

/** A world served from a directory by the single-world server. */
export interface LocalWorldOptions {
  /** The directory; state lives in `<dir>/.kit/world/`. */
  dir: string;
  org: string;
  world: string;
  twins: TwinBundle[];
  /** The guest runtime as a standalone script, for scenario `js` handlers. */
  guestRuntime?: string;
  /** With `thread: 'worker'`: a call running longer ends the world's worker (default 5000 ms). */
  callTimeoutMs?: number;
  /**
   * `main` (default): the world runs in the caller's thread; the code it does not trust
   * (scenario scripts, checks, twins from users' sources) runs in worker threads under a
   * watchdog (runtime/lane/), so nothing it does stops the caller's thread.
   * `worker`: the whole world in a worker thread of its own under a watchdog, one thread hop
   * (~20–35 µs) per request; the built-in twins' work is then off the caller's thread too.
   */
  thread?: 'main' | 'worker';
  /**
   * The vendor behind rooted twins, as data (it crosses to a worker thread): the sealing key
   * (base64, host/node/sealing-key.ts), whether roots and links may name loopback, and a proxy
   * every outbound call goes through (`http://user:pass@host:port`, with the PEM of a CA it may
   * present). Absent: no credential can be sealed and no refresh made.
   */
  roots?: { sealingKey?: string; loopback?: boolean; proxy?: { url: string; ca?: string } };
  /**
   * The scenario and check files a world file declares (docs/world-file.md): each put in force
   * at start, read again when it changes; a twin's `PUT …/scenario` writes its file. Without
   * it, scenarios are kept in `<dir>/.kit/scenarios/`. In this thread only (`thread: 'main'`).
   */
  colocate?: ColocatedFiles;
  /** Where problems with those files are told, one line each (the CLI's standard error). `thread: 'main'` only. */
  report?: (line: string) => void;
}
