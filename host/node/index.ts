export { DEFAULT_MAX_BODY_BYTES, listenHttp, MAX_HEAD_BYTES } from './http/index.js';
export type { HttpServer, HttpServerOptions } from './http/index.js';
export { hostDir, loadOrCreateAdminToken, loadOrCreateTokens, parseTokenFile, readTokenFile, tokenFilePath, writeHostUrl, writeTokenFile } from './tokens.js';
export type { TokenFile } from './tokens.js';
export { caDir, createMemoryCa, loadOrCreateCa, startConnectProxy } from './proxy/index.js';
export type { ConnectProxy, ConnectProxyOptions, WorldCa } from './proxy/index.js';
export { defaultPagesDir, loadPageFiles, readPageDirs } from './pages.js';
export { createStreamRoutes, MAX_STREAM_MESSAGE_BYTES, STREAM_CLOSE, StreamBridge } from './streams/index.js';
export type { StreamLimits, StreamRoutes, StreamRoutesOptions, StreamSocket } from './streams/index.js';
