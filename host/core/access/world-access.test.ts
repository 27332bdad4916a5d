import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../../../runtime/store/memory.js';
import { WorldAccess, type SessionRecord } from './world-access.js';

const tokens = { token: 'tok_access-write-token-abcdefghij', readToken: 'tok_r_access-read-token-abcdefghij' };
const NOW = Date.parse('2030-01-01T00:00:00Z');
const session = (over: Partial<SessionRecord> = {}): SessionRecord => ({ scope: 'write', kind: 'token', origin: 'http://shop--acme.localhost:1', who: null, issuer: null, keyId: null, createdAt: NOW, expiresAt: NOW + 60_000, ...over });

describe('WorldAccess', () => {
  it('keeps nothing it found in memory past an end made through another object of the same world', () => {
    // The host's registry makes a new object when it reads a dropped world again; a request may still hold the old one.
    const storage = new MemoryStorage();
    const held = new WorldAccess('acme/shop', tokens, storage);
    const made = held.makeKey({ name: 'ci', scope: 'write', for: null, expiresAt: null, createdBy: 'token', replace: false }, NOW);
    if (typeof made === 'string') throw new Error(made);
    const id = held.openSession(session(), NOW);
    expect(held.grantOf(made.key, NOW)).toMatchObject({ kind: 'key', scope: 'write' });
    expect(held.session(id, NOW)).not.toBeNull();

    const fresh = new WorldAccess('acme/shop', tokens, storage);
    expect(fresh.grantOf(made.key, NOW)).toMatchObject({ kind: 'key' });
    expect(fresh.revokeKey(made.record.id)).toBe(true);
    fresh.endSession(id);
    expect(held.grantOf(made.key, NOW)).toBeNull();
    expect(held.session(id, NOW)).toBeNull();
    // And the other way round.
    const again = held.makeKey({ name: 'ci', scope: 'read', for: null, expiresAt: null, createdBy: 'token', replace: false }, NOW);
    if (typeof again === 'string') throw new Error(again);
    expect(fresh.grantOf(again.key, NOW)).toMatchObject({ kind: 'key', scope: 'read' });
    held.revokeKeysOf('token');
    expect(fresh.grantOf(again.key, NOW)).toBeNull();
  });

  it('ends every key and session for new tokens, also in an object made for the old ones', () => {
    const storage = new MemoryStorage();
    const old = new WorldAccess('acme/shop', tokens, storage);
    const made = old.makeKey({ name: 'ci', scope: 'read', for: null, expiresAt: null, createdBy: 'token', replace: false }, NOW);
    if (typeof made === 'string') throw new Error(made);
    const id = old.openSession(session(), NOW);
    expect(old.grantOf(made.key, NOW)).not.toBeNull();
    const rotated = new WorldAccess('acme/shop', { token: 'tok_new-write-token-abcdefghijklm', readToken: 'tok_r_new-read-token-abcdefghijklm' }, storage);
    expect(rotated.keys()).toEqual([]);
    expect(old.grantOf(made.key, NOW)).toBeNull();
    expect(old.session(id, NOW)).toBeNull();
    // Another world of the same storage keeps what it holds.
    const other = new WorldAccess('acme/other', tokens, storage);
    const kept = other.makeKey({ name: 'ci', scope: 'read', for: null, expiresAt: null, createdBy: 'token', replace: false }, NOW);
    if (typeof kept === 'string') throw new Error(kept);
    WorldAccess.removeAll(storage, 'acme/shop');
    expect(other.grantOf(kept.key, NOW)).not.toBeNull();
  });

  it('answers an expired key or session as none, though it was found before', () => {
    const access = new WorldAccess('acme/shop', tokens, new MemoryStorage());
    const made = access.makeKey({ name: 'brief', scope: 'read', for: null, expiresAt: NOW + 1000, createdBy: 'token', replace: false }, NOW);
    if (typeof made === 'string') throw new Error(made);
    const id = access.openSession(session({ expiresAt: NOW + 1000 }), NOW);
    expect(access.grantOf(made.key, NOW)).not.toBeNull();
    expect(access.session(id, NOW)).not.toBeNull();
    expect(access.grantOf(made.key, NOW + 1000)).toBeNull();
    expect(access.session(id, NOW + 1000)).toBeNull();
  });
});

describe('a token that looks like a named key', () => {
  it('still opens the world as the token: one minted `tok_` + random characters beginning `k_`, or adopted', () => {
    const lookalike = { token: 'tok_k_looks-like-a-key-but-is-the-token', readToken: 'tok_r_the-read-token-abcdefghijklmn' };
    const access = new WorldAccess('acme/shop', lookalike, new MemoryStorage());
    expect(access.grantOf(lookalike.token, NOW)).toEqual({ kind: 'token', scope: 'write' });
    expect(access.scopeOf(lookalike.token)).toBe('write');
    expect(access.grantOf('tok_k_not-this-worlds-anything-at-all', NOW)).toBeNull();
  });
});
