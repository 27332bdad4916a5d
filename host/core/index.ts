export { allowAnyOrigin, isPreflight, preflightAnswer } from './cors.js';
export { findCredential, mintTokens, TokenVerifier } from './credentials.js';
export type { Credential, CredentialSource, WorldTokens } from './credentials.js';
export { readTokenOpens } from './scopes.js';
export type { BodyReader, HttpAnswer, HttpHandler, HttpHead } from './types.js';
