import { describe, expect, it } from 'vitest';
import { findCredential, mintTokens, TokenVerifier } from './credentials.js';
import { readTokenOpens } from './scopes.js';

describe('findCredential', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');

  it('reads x-kit-token and x-twins-key on the world API, never Authorization', () => {
    expect(findCredential({ 'x-kit-token': 't1' }, 'api')).toEqual({ value: 't1', source: 'x-kit-token' });
    // An attached app reaches the world's own paths with the token in x-twins-key (Authentication 3) …
    expect(findCredential({ 'x-twins-key': 't1', authorization: 'Bearer t1' }, 'api')).toEqual({ value: 't1', source: 'x-twins-key' });
    // … but an Authorization header is the vendor's, never a credential for the world API.
    expect(findCredential({ authorization: 'Bearer t1' }, 'api')).toBeNull();
  });

  it('reads x-kit-token, then x-twins-key, then Authorization on the vendor API', () => {
    expect(findCredential({ 'x-kit-token': 'a', 'x-twins-key': 'b', authorization: 'Bearer c' }, 'vendor')?.value).toBe('a');
    expect(findCredential({ 'x-twins-key': 'b', authorization: 'Bearer c' }, 'vendor')).toEqual({ value: 'b', source: 'x-twins-key' });
    expect(findCredential({ authorization: 'Bearer c' }, 'vendor')).toEqual({ value: 'c', source: 'authorization' });
    expect(findCredential({ authorization: 'token c' }, 'vendor')?.value).toBe('c');
    expect(findCredential({ authorization: 'TOKEN  c ' }, 'vendor')?.value).toBe('c');
    expect(findCredential({ authorization: `Basic ${b64('user:pa:ss')}` }, 'vendor')?.value).toBe('pa:ss');
    expect(findCredential({ authorization: `basic ${b64(':c')}` }, 'vendor')?.value).toBe('c');
    // No password: the user name is the key, as Stripe's `curl -u sk_test_…:` sends it.
    expect(findCredential({ authorization: `Basic ${b64('tok_c:')}` }, 'vendor')).toEqual({ value: 'tok_c', source: 'authorization' });
  });

  it('finds nothing in an Authorization it cannot read', () => {
    for (const a of ['Bearer', 'Bearer ', 'Digest abc', `Basic ${b64('nocolon')}`, `Basic ${b64(':')}`, 'Basic', 'garbage']) {
      expect([a, findCredential({ authorization: a }, 'vendor')]).toEqual([a, null]);
    }
  });
});

describe('TokenVerifier', () => {
  const v = new TokenVerifier({ token: 'tok_write', readToken: 'tok_r_read' });

  it('tells the token, the read token and anything else apart', () => {
    expect(v.scopeOf('tok_write')).toBe('write');
    expect(v.scopeOf('tok_r_read')).toBe('read');
    for (const wrong of ['', 'tok_writ', 'tok_writee', 'TOK_WRITE', 'tok_r_rea', 'x'.repeat(2000)]) expect(v.scopeOf(wrong)).toBeNull();
  });
});

describe('readTokenOpens', () => {
  it('opens the read endpoints of the spec and nothing else', () => {
    const open = ['GET /log/a', 'GET /checkpoint/a', 'GET /changesets', 'GET /changesets/x', 'GET /requests', 'GET /twins', 'GET /map',
      'GET /timeline', 'GET /diff', 'GET /clock', 'GET /history', 'GET /branches', 'HEAD /map', 'POST /session', 'GET /session', 'DELETE /session'];
    const closed = ['PUT /clock', 'POST /clock/advance', 'GET /clock/advance', 'GET /twins/a/status', 'GET /twins/a/scenario', 'GET /keys',
      'GET /checks', 'POST /changesets', 'POST /push', 'GET /', 'GET /origin', 'GET /links', 'PUT /session/x', 'OPTIONS /map'];
    for (const e of open) expect([e, readTokenOpens(e.split(' ')[0]!, e.split(' ')[1]!)]).toEqual([e, true]);
    for (const e of closed) expect([e, readTokenOpens(e.split(' ')[0]!, e.split(' ')[1]!)]).toEqual([e, false]);
  });
});

describe('mintTokens', () => {
  it('never mints a world token that looks like a read token or a named key (tok_r_, tok_k_)', () => {
    // One in 4,096 random parts begins `k_` (and as many `r_`): 20,000 mints meet several.
    for (let i = 0; i < 20_000; i++) {
      const { token, readToken } = mintTokens();
      if (token.startsWith('tok_k_') || token.startsWith('tok_r_')) throw new Error(`minted ${token}`);
      expect(readToken.startsWith('tok_r_')).toBe(true);
    }
  });
});
