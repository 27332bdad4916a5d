export { findCredential, TokenVerifier } from './credentials.js';
export type { Credential, CredentialSource } from './credentials.js';
export { readTokenOpens } from './scopes.js';
export { loadOrCreateTokens, mintTokens, parseTokenFile, readTokenFile, tokenFilePath, writeTokenFile } from './tokens.js';
export type { TokenFile, WorldTokens } from './tokens.js';
