/**
 * `twinkit/passes`: signing passes for worlds (docs/passes.md). The signer (Web Crypto: Node
 * or workerd), its keys on disk, and a local issuer serving its JWKS (Node).
 */
export { createPassSigner, generatePassKey, publicJwk, checkPassKey, DEFAULT_PASS_TTL_SECONDS, PUBLISHED_KEYS } from './signer.js';
export type { PassKey, PassSigner, PassToSign } from './signer.js';
export { readPassKeys, writePassKeys, readPassIssuer, writePassIssuer, passKeysPath, passIssuerPath, PassFileError } from './files.js';
export type { PassFileErrorCode } from './files.js';
export { startPassIssuer } from './issuer.js';
export type { PassIssuer, PassIssuerOptions } from './issuer.js';
export { PASS_TYPE, PASS_ALGORITHMS, MAX_PASS_LIFETIME_SECONDS, JWKS_PATH, trustedIssuers } from '../../host/core/access/passes.js';
