export { DEFAULT_MAX_BODY_BYTES, listenHttp, MAX_HEAD_BYTES } from './uws.js';
export type { HttpServer, HttpServerOptions } from './uws.js';
export type { BodyReader, HttpAnswer, HttpHandler, HttpHead } from '../../core/types.js';
