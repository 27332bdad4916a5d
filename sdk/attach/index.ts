/**
 * The world client's attach side: the attach manifest's shape and checks. The Node attach
 * entry itself is `register.ts` (`twinkit/attach`), loaded with `node --import`.
 */
export { envNameAllowed, fillStreamEnv, MANIFEST_PATH, ManifestError, manifestUrl, parseAttachManifest } from './manifest.js';
export type { AttachCa, AttachManifest, AttachProxy, AttachStream } from './manifest.js';
