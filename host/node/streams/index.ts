export { closeReason, DEFAULT_STREAM_LIMITS, STREAM_CLOSE, StreamBridge } from '../../core/streams.js';
export type { StreamBridgeOptions, StreamLimits, StreamSocket } from '../../core/streams.js';
export { createStreamRoutes, MAX_STREAM_MESSAGE_BYTES } from './uws.js';
export type { StreamRoutes, StreamRoutesOptions } from './uws.js';
