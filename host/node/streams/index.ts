export { closeReason, DEFAULT_STREAM_LIMITS, STREAM_CLOSE, StreamBridge } from './bridge.js';
export type { StreamBridgeOptions, StreamLimits, StreamSocket } from './bridge.js';
export { createStreamRoutes, MAX_STREAM_MESSAGE_BYTES } from './uws.js';
export type { StreamRoutes, StreamRoutesOptions } from './uws.js';
