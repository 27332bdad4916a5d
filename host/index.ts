export { createSingleWorldCore, NAME_PATTERN, startSingleWorldServer } from './single-world.js';
export type { PlainRequest, SingleWorldCore, SingleWorldOptions, SingleWorldServer, TwinScopes } from './single-world.js';
export { DEFAULT_BUDGET_SIZE, DEFAULT_BUDGET_WINDOW_MS, RequestBudget, retryAfterSeconds } from './limits.js';
export type { BudgetOptions } from './limits.js';
export { findCredential, loadOrCreateTokens, mintTokens, readTokenOpens, tokenFilePath, TokenVerifier } from './auth/index.js';
export type { Credential, CredentialSource, TokenFile, WorldTokens } from './auth/index.js';
export { DEFAULT_MAX_BODY_BYTES, listenHttp } from './http/index.js';
export type { HttpAnswer, HttpHandler, HttpHead, HttpServer, HttpServerOptions } from './http/index.js';
