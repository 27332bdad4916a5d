/**
 * The Node attach entry (`twinkit/attach`):
 *
 *     KIT_WORLD=<world url> KIT_WORLD_TOKEN=<token> node --import twinkit/attach app.js
 *
 * Reads the world's attach manifest before the app's first line runs (top-level await in a
 * `--import` module holds the app back), then sends the app's requests to twinned vendor
 * hosts to their twins. See node.ts for what is hooked, docs/attach.md for the whole story.
 *
 * If the world cannot be reached or refuses the token, the app is stopped (exit 1): an app
 * meant to talk to twins must never fall through to the real vendor with real keys.
 */
import { AttachError, attachFromEnv } from './node.js';

try {
  const attached = await attachFromEnv();
  if (attached === null) {
    process.emitWarning('twinkit/attach is loaded but KIT_WORLD is not set: nothing is attached', { code: 'KIT_ATTACH_NOT_SET' });
  }
} catch (e) {
  const message = e instanceof AttachError ? e.message : e instanceof Error ? (e.stack ?? e.message) : String(e);
  process.stderr.write(`kit attach: ${message}\n`);
  process.exit(1);
}
