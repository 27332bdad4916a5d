/**
 * A world's browser sessions, named keys and spent passes, kept hashed in the host's storage
 * beside the world (spec: Session, Named key; Authentication 5–10):
 *   ['#access', '<org>/<world>', 'tokens']       → a fingerprint of the world's tokens
 *   ['#access', '<org>/<world>', 's', <digest>]  → SessionRecord (digest of the cookie's id)
 *   ['#access', '<org>/<world>', 'k', <digest>]  → KeyRecord (digest of the key)
 *   ['#access', '<org>/<world>', 'i', <key id>]  → the key's digest
 *   ['#access', '<org>/<world>', 'p', <jti>]     → epoch ms the spent pass expires
 * Nothing here holds a secret: a session id or a key is answered once and kept as its SHA-256.
 * New tokens (a rotation, or a world served again with other tokens) end every session and key:
 * the fingerprint tells, the first time the world is looked at after the change.
 */
import type { Scope } from '../../../runtime/runner/types.js';
import type { Key, Storage } from '../../../runtime/store/types.js';
import { prefixEnd } from '../../../runtime/store/keys.js';
import { randomPart, sha256Hex, TokenVerifier, type WorldTokens } from '../credentials.js';

/** 30 days (spec Limits: browser session lifetime). */
export const SESSION_MS = 30 * 24 * 3600_000;
/** 12 hours (spec Limits: pass session lifetime). */
export const PASS_SESSION_MS = 12 * 3600_000;
/** Past these, the oldest session is ended, and a new key refused. */
export const MAX_SESSIONS = 10_000;
export const MAX_KEYS = 1_000;
/** A key's `lastUsedAt` is written at most this often. */
const LAST_USED_EVERY_MS = 60_000;

export const KEY_PREFIX = 'tok_k_';

/** How a session was opened. */
export type SessionKind = 'token' | 'local' | 'pass' | 'key';

export interface SessionRecord {
  scope: Scope;
  kind: SessionKind;
  origin: string;
  /** The person: a pass's subject, `this machine` for the loopback session; null when opened with the token. */
  who: string | null;
  /** A pass's display name of the person, when the platform gave one. */
  name?: string;
  issuer: string | null;
  /** A read key's session ends with its key. */
  keyId: string | null;
  createdAt: number;
  expiresAt: number;
}

export interface KeyRecord {
  id: string;
  name: string;
  scope: Scope;
  /** The person it was made for (`for`), given with the world's token. */
  for: string | null;
  /** Who made it: `token` (the world's token), or the session's person. */
  createdBy: string;
  createdAt: number;
  lastUsedAt: number | null;
  expiresAt: number | null;
}

/** What a presented credential opens. */
export type Grant =
  | { kind: 'token'; scope: Scope }
  | { kind: 'key'; scope: Scope; key: KeyRecord }
  | { kind: 'session'; scope: Scope; session: SessionRecord; sessionId: string };

/** A key as the list answers it (spec Named key). */
export interface KeyRow {
  id: string;
  name: string;
  scope: Scope;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  for: string | null;
  createdBy: string;
}

/** What the two tokens open: the same two objects for every request. */
const WRITE_TOKEN: Grant = Object.freeze({ kind: 'token', scope: 'write' });
const READ_TOKEN: Grant = Object.freeze({ kind: 'token', scope: 'read' });

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function keyRow(k: KeyRecord): KeyRow {
  return { id: k.id, name: k.name, scope: k.scope, createdAt: iso(k.createdAt)!, lastUsedAt: iso(k.lastUsedAt), expiresAt: iso(k.expiresAt), for: k.for, createdBy: k.createdBy };
}

function shortId(prefix: string): string {
  return `${prefix}${Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** Longest credential or cookie value hashed; longer ones are refused unhashed. */
const MAX_PRESENTED = 1024;

export interface NewKey {
  name: string;
  scope: Scope;
  for: string | null;
  expiresAt: number | null;
  createdBy: string;
  /** End the keys of the same name (and `for`) first. */
  replace: boolean;
}

/** Keeps `value` under `key`, forgetting the oldest past `max`. */
function remember<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
}

export class WorldAccess {
  readonly name: string;
  readonly #storage: Storage;
  readonly #tokens: TokenVerifier;
  readonly #prefix: Key;
  /**
   * Records read before, by digest (sessions, keys), and a key's digest by its id, so that a
   * request's check reads no storage. Each write below keeps these true, and one made through
   * another object of the same world (`#ended`, counted per storage) makes them be read again.
   * Only what was found is kept: a made-up id or key is looked up each time.
   */
  readonly #sessions = new Map<string, SessionRecord>();
  readonly #keys = new Map<string, KeyRecord>();
  readonly #keyDigests = new Map<string, string>();
  /** The storage's count of this world's ends (`endsOf`) when these records were read. */
  #seen: number;
  readonly #ends: Map<string, number>;

  constructor(name: string, tokens: WorldTokens, storage: Storage) {
    this.name = name;
    this.#storage = storage;
    this.#tokens = new TokenVerifier(tokens);
    this.#prefix = ['#access', name];
    this.#ends = endsOf(storage);
    this.#seen = this.#ends.get(name) ?? 0;
    const fingerprint = sha256Hex(`${tokens.token}\n${tokens.readToken}`);
    const known = storage.get<string>([...this.#prefix, 'tokens']);
    if (known !== fingerprint) {
      // New tokens: whatever the old ones opened ends (spec: rotate ends every key and session).
      storage.transact((tx) => {
        if (known !== undefined) for (const kv of storage.range({ start: this.#prefix, end: prefixEnd(this.#prefix) })) if (kv.key[2] !== 'p') tx.remove(kv.key);
        tx.put([...this.#prefix, 'tokens'], fingerprint);
      });
      if (known !== undefined) this.#ended();
    }
  }

  /**
   * Records read before a session ended or a key was revoked through another object of this
   * world (the host's registry makes a new one when it reads a dropped world again, while a
   * request may still hold the old) are read again.
   */
  #fresh(): void {
    const ends = this.#ends.get(this.name) ?? 0;
    if (ends === this.#seen) return;
    this.#sessions.clear();
    this.#keys.clear();
    this.#keyDigests.clear();
    this.#seen = ends;
  }

  /** Something of this world ended: every other object of it reads its records again. */
  #ended(): void {
    this.#fresh();
    this.#seen = (this.#ends.get(this.name) ?? 0) + 1;
    this.#ends.set(this.name, this.#seen);
  }

  /** What a token or a named key opens (the key's `lastUsedAt` is kept), or null. */
  grantOf(presented: string, now: number): Grant | null {
    if (presented.startsWith(KEY_PREFIX)) {
      const key = this.#key(presented, now);
      if (key !== null) return { kind: 'key', scope: key.scope, key };
      // Not a key: a token may look like one (minted `tok_` + random characters that began `k_`, or adopted).
    }
    const scope = this.#tokens.scopeOf(presented);
    return scope === null ? null : scope === 'write' ? WRITE_TOKEN : READ_TOKEN;
  }

  /** What a token or a live key opens, without noting the key's use (the proxy, streams, a header check). */
  scopeOf(presented: string): Scope | null {
    if (presented.startsWith(KEY_PREFIX)) {
      const key = this.#find(presented, Date.now());
      if (key !== null) return key.record.scope;
    }
    return this.#tokens.scopeOf(presented);
  }

  // ------------------------------------------------------------ keys

  #find(presented: string, now: number): { digest: string; record: KeyRecord } | null {
    if (presented.length > MAX_PRESENTED) return null;
    // The digest is the record's storage key: finding it is the match (no second comparison).
    const digest = sha256Hex(presented);
    this.#fresh();
    let stored = this.#keys.get(digest);
    if (stored === undefined) {
      stored = this.#storage.get<KeyRecord>([...this.#prefix, 'k', digest]);
      if (stored === undefined) return null;
      remember(this.#keys, digest, stored, MAX_KEYS);
    }
    if (stored.expiresAt !== null && stored.expiresAt <= now) return null;
    return { digest, record: stored };
  }

  #key(presented: string, now: number): KeyRecord | null {
    const found = this.#find(presented, now);
    if (found === null) return null;
    const { digest, record } = found;
    // The record #find kept is the one last written: its `lastUsedAt` says when.
    if (now - (record.lastUsedAt ?? 0) >= LAST_USED_EVERY_MS) {
      const updated = { ...record, lastUsedAt: now };
      this.#keys.set(digest, updated);
      this.#storage.transact((tx) => {
        // Only while the key still stands: a revoke in between wins.
        if (tx.get([...this.#prefix, 'k', digest]) !== undefined) tx.put([...this.#prefix, 'k', digest], updated);
      });
      return updated;
    }
    return record;
  }

  keys(): KeyRecord[] {
    const start: Key = [...this.#prefix, 'k'];
    const out: KeyRecord[] = [];
    for (const kv of this.#storage.range<KeyRecord & { digest?: string }>({ start, end: prefixEnd(start) })) {
      const { digest: _digest, ...record } = kv.value;
      out.push(record);
    }
    return out.sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
  }

  /** A new key: its value (answered once) and its record; null when the name is taken and `replace` is not set. */
  makeKey(input: NewKey, now: number): { key: string; record: KeyRecord } | 'name_taken' | 'too_many' {
    const existing = this.keys();
    const same = existing.filter((k) => k.name === input.name && k.for === input.for);
    if (same.length > 0 && !input.replace) return 'name_taken';
    if (existing.length - same.length >= MAX_KEYS) return 'too_many';
    const key = `${KEY_PREFIX}${randomPart()}`;
    const digest = sha256Hex(key);
    const record: KeyRecord = { id: shortId('key_'), name: input.name, scope: input.scope, for: input.for, createdBy: input.createdBy, createdAt: now, lastUsedAt: null, expiresAt: input.expiresAt };
    this.#storage.transact((tx) => {
      for (const old of same) this.#removeKey(tx, old.id);
      tx.put([...this.#prefix, 'k', digest], { ...record, digest });
      tx.put([...this.#prefix, 'i', record.id], digest);
    });
    if (same.length > 0) this.#ended();
    return { key, record };
  }

  #removeKey(tx: { get<V>(key: Key): V | undefined; remove(key: Key): void }, id: string): boolean {
    const digest = tx.get<string>([...this.#prefix, 'i', id]);
    this.#keyDigests.delete(id);
    if (digest === undefined) return false;
    this.#keys.delete(digest);
    tx.remove([...this.#prefix, 'i', id]);
    tx.remove([...this.#prefix, 'k', digest]);
    return true;
  }

  /** Revokes one key; false when there is none of that id. */
  revokeKey(id: string): boolean {
    if (!/^key_[0-9a-f]{16}$/.test(id)) return false;
    const revoked = this.#storage.transact((tx) => this.#removeKey(tx, id));
    if (revoked) this.#ended();
    return revoked;
  }

  /** Revokes every key made by or for `person`; how many. */
  revokeKeysOf(person: string): number {
    const doomed = this.keys().filter((k) => k.createdBy === person || k.for === person);
    this.#storage.transact((tx) => {
      for (const k of doomed) this.#removeKey(tx, k.id);
    });
    if (doomed.length > 0) this.#ended();
    return doomed.length;
  }

  /** The key of an id, if it stands and has not expired. */
  #keyById(id: string, now: number): KeyRecord | null {
    this.#fresh();
    let digest = this.#keyDigests.get(id);
    if (digest === undefined) {
      digest = this.#storage.get<string>([...this.#prefix, 'i', id]);
      if (digest === undefined) return null;
      remember(this.#keyDigests, id, digest, MAX_KEYS);
    }
    let record = this.#keys.get(digest);
    if (record === undefined) {
      record = this.#storage.get<KeyRecord>([...this.#prefix, 'k', digest]);
      if (record === undefined) return null;
      remember(this.#keys, digest, record, MAX_KEYS);
    }
    if (record.expiresAt !== null && record.expiresAt <= now) return null;
    return record;
  }

  // ------------------------------------------------------------ sessions

  /** The session a cookie's id names, if it stands (and its key, for a key's session). */
  session(id: string, now: number): SessionRecord | null {
    if (id.length === 0 || id.length > MAX_PRESENTED) return null;
    const digest = sha256Hex(id);
    this.#fresh();
    let record = this.#sessions.get(digest);
    if (record === undefined) {
      record = this.#storage.get<SessionRecord>([...this.#prefix, 's', digest]);
      if (record === undefined) return null;
      remember(this.#sessions, digest, record, MAX_SESSIONS);
    }
    if (record.expiresAt <= now) return null;
    if (record.keyId !== null && this.#keyById(record.keyId, now) === null) return null;
    return record;
  }

  /** Opens a session: the cookie's id (answered once) and its record. */
  openSession(record: SessionRecord, now: number): string {
    const id = randomPart();
    const start: Key = [...this.#prefix, 's'];
    this.#storage.transact((tx) => {
      const live: { key: Key; createdAt: number }[] = [];
      for (const kv of this.#storage.range<SessionRecord>({ start, end: prefixEnd(start) })) {
        if (kv.value.expiresAt <= now) tx.remove(kv.key);
        else live.push({ key: kv.key, createdAt: kv.value.createdAt });
      }
      if (live.length >= MAX_SESSIONS) {
        live.sort((a, b) => a.createdAt - b.createdAt);
        for (const old of live.slice(0, live.length - MAX_SESSIONS + 1)) tx.remove(old.key);
      }
      tx.put([...start, sha256Hex(id)], record);
    });
    // Expired sessions, or the oldest past the limit, may have ended with it.
    this.#sessions.clear();
    this.#ended();
    return id;
  }

  endSession(id: string): void {
    if (id.length === 0 || id.length > MAX_PRESENTED) return;
    const digest = sha256Hex(id);
    this.#sessions.delete(digest);
    this.#storage.transact((tx) => tx.remove([...this.#prefix, 's', digest]));
    this.#ended();
  }

  // ------------------------------------------------------------ passes

  /** Notes a pass as spent; false when it was already (a replay). Spent ids past their expiry are forgotten. */
  spendPass(id: string, expiresAt: number, now: number): boolean {
    const start: Key = [...this.#prefix, 'p'];
    return this.#storage.transact((tx) => {
      if (tx.get([...start, id]) !== undefined) return false;
      for (const kv of this.#storage.range<number>({ start, end: prefixEnd(start) })) if (kv.value <= now) tx.remove(kv.key);
      tx.put([...start, id], expiresAt);
      return true;
    });
  }

  /** Resolves once what was written is on disk (a spent pass must survive a restart). */
  durable(): Promise<void> {
    return this.#storage.durable();
  }

  /** Everything of the world's: its sessions, keys and spent passes (the world is removed). */
  static removeAll(storage: Storage, name: string): void {
    const prefix: Key = ['#access', name];
    storage.transact((tx) => {
      for (const kv of storage.range({ start: prefix, end: prefixEnd(prefix) })) tx.remove(kv.key);
    });
    const ends = endsOf(storage);
    ends.set(name, (ends.get(name) ?? 0) + 1);
  }
}

/**
 * Per storage, each world's count of ends (a session ended, a key revoked, new tokens): what
 * lets several `WorldAccess` objects of one world keep what they hold in memory true. A number
 * per world that ever ended something; one process holds a storage (a Durable Object, an LMDB
 * environment a host opened).
 */
const ENDS = new WeakMap<Storage, Map<string, number>>();

function endsOf(storage: Storage): Map<string, number> {
  let ends = ENDS.get(storage);
  if (ends === undefined) ENDS.set(storage, (ends = new Map()));
  return ends;
}
