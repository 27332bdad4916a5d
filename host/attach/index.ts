export { buildAttachManifest, streamVariable } from './manifest.js';
export type { AttachManifestInput, AttachTwin } from './manifest.js';
