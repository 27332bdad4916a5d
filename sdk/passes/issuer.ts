/**
 * A pass issuer on this machine (Node, `node:http`): serves a signer's public keys at
 * `/.well-known/jwks.json`, which is all a host asks of an issuer. For tests and for a person
 * trying passes locally (`kit pass issuer`); a platform serves its JWKS its own way.
 *
 * With a folder, the folder's `keys.json` is the truth: it is read again at each request and
 * each signing, so `kit pass rotate` in another process is seen at once, and a restart keeps
 * the keys (and so the passes in flight).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { JWKS_PATH } from '../../host/core/access/passes.js';
import { readPassKeys, writePassIssuer, writePassKeys } from './files.js';
import { createPassSigner } from './signer.js';
import type { PassSigner, PassToSign } from './signer.js';

export interface PassIssuerOptions {
  /** Address to listen on (default 127.0.0.1). */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** Keeps the keys in `<dir>/keys.json` and the issuer URL in `<dir>/issuer`; absent: in memory. */
  dir?: string;
  /** The `iss` passes carry when the issuer is reached at another URL than it listens on (behind a proxy). */
  issuer?: string;
}

export interface PassIssuer {
  /** The issuer, as hosts trust it (`--trust`): `http://127.0.0.1:4460`. */
  readonly url: string;
  /** The JWKS URL hosts fetch. */
  readonly jwksUrl: string;
  /** How many times the JWKS was served: what the hosts fetched. */
  readonly jwksRequests: number;
  /** The key passes are signed with now. */
  kid(): Promise<string>;
  sign(pass: PassToSign): Promise<string>;
  /** A new signing key; the previous ones stay published. Answers its `kid`. */
  rotate(): Promise<string>;
  close(): Promise<void>;
}

/** The URL a listener at `host:port` is reached at from this machine. */
function urlOf(host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

export async function startPassIssuer(options: PassIssuerOptions = {}): Promise<PassIssuer> {
  const dir = options.dir;
  let signer: PassSigner | null = null;
  let jwksRequests = 0;
  let issuer = '';

  /** The signer, from the folder's keys when there is a folder (made and kept there the first time). */
  const current = async (): Promise<PassSigner> => {
    if (dir === undefined) return (signer ??= await createPassSigner({ issuer }));
    const keys = await readPassKeys(dir);
    if (keys === null) {
      signer = await createPassSigner({ issuer });
      await writePassKeys(dir, signer.keys());
    } else if (signer === null || signer.keys().map((k) => k.kid).join() !== keys.map((k) => k.kid).join()) {
      signer = await createPassSigner({ issuer, keys });
    }
    return signer;
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      const text = `${JSON.stringify(body)}\n`;
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
      res.end(req.method === 'HEAD' ? undefined : text);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return answer(405, { error: { code: 'method_not_allowed', message: 'this issuer only serves its keys' } }, { allow: 'GET, HEAD' });
    if (path === JWKS_PATH) {
      jwksRequests++;
      current().then(
        (s) => answer(200, s.jwks(), { 'content-type': 'application/jwk-set+json', 'cache-control': 'max-age=60', 'access-control-allow-origin': '*' }),
        (e: unknown) => answer(500, { error: { code: 'internal', message: e instanceof Error ? e.message : String(e) } }),
      );
      return;
    }
    if (path === '/') return answer(200, { issuer, jwks_uri: `${issuer}${JWKS_PATH}` });
    return answer(404, { error: { code: 'not_found', message: `this issuer serves ${JWKS_PATH}` } });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const listening = urlOf(options.host ?? '127.0.0.1', (server.address() as AddressInfo).port);
  issuer = options.issuer ?? listening;
  try {
    signer = await current();
    if (dir !== undefined) await writePassIssuer(dir, signer.issuer);
  } catch (e) {
    server.close();
    throw e;
  }
  issuer = signer.issuer;

  return {
    url: issuer,
    jwksUrl: `${listening}${JWKS_PATH}`,
    get jwksRequests() {
      return jwksRequests;
    },
    async kid() {
      return (await current()).kid;
    },
    async sign(pass) {
      return (await current()).sign(pass);
    },
    async rotate() {
      const s = await current();
      const kid = await s.rotate();
      if (dir !== undefined) await writePassKeys(dir, s.keys());
      return kid;
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
