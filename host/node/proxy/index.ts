export { caDir, createMemoryCa, loadOrCreateCa } from './ca.js';
export type { CaOptions, WorldCa } from './ca.js';
export { parseAuthority, startConnectProxy } from './proxy.js';
export type { ConnectProxy, ConnectProxyOptions, TunnelLookup } from './proxy.js';
export type { TunnelAllowance, TunnelScope } from './addresses.js';
