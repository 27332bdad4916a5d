export { allowAnyOrigin, isPreflight, preflightAnswer } from './cors.js';
export { findCredential, mintTokens, TokenVerifier } from './credentials.js';
export type { Credential, CredentialSource, WorldTokens } from './credentials.js';
export { readTokenOpens } from './scopes.js';
export type { BodyReader, HttpAnswer, HttpHandler, HttpHead } from './types.js';
export { createHostCore, twinScopesOf } from './core.js';
export type { AdminSurface, HostCore, HostCoreOptions, MountedWorld, PlainRequest, PublishedAddress, TwinScopes, WorldDirectory } from './core.js';
export { errorAnswer, finish, fromFailure, fromWorld, hostAnswer } from './answers.js';
export { locate, NAME_PATTERN, splitUrl } from './paths.js';
