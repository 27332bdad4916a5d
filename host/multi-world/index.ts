export { startMultiWorldHost } from './host.js';
export type { MultiWorldHost, MultiWorldHostOptions } from './host.js';
export type { WorldRow } from './worlds.js';
export { ADMIN_NAMES } from './admin.js';
