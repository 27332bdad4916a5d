/**
 * What `kit world attach` sets for each language beyond the variables every tool reads
 * (HTTPS_PROXY, SSL_CERT_FILE, …; sdk/cli/attach.ts): the counterpart of Node's
 * `--import twinkit/attach` for a language whose clients or vendor SDKs ignore those (a CA
 * bundle of their own, a proxy setting of their own). Each language is a file of this folder;
 * all run, in this order, before the command starts. Node-only (the CLI runs them).
 */
import { java } from './java.js';
import { php } from './php.js';
import { python } from './python.js';
import { ruby } from './ruby.js';
import type { AttachContext, AttachLanguage } from './types.js';

export type { AttachContext, AttachLanguage } from './types.js';

/** Every language attach prepares, in order. */
export const LANGUAGES: readonly AttachLanguage[] = [
  ruby,
  php,
  python,
  java,
];

/**
 * Prepares every language; one that fails warns and leaves the others (and the command) as
 * they are. Answers what undoes them all, for when the command ends.
 */
export async function prepareLanguages(ctx: AttachContext, languages: readonly AttachLanguage[] = LANGUAGES): Promise<() => Promise<void>> {
  const undo: (() => Promise<void>)[] = [];
  for (const language of languages) {
    try {
      const done = await language.prepare(ctx);
      if (done) undo.push(done);
    } catch (e) {
      ctx.warn(`kit: could not prepare ${language.name} for the world (${e instanceof Error ? e.message : String(e)}); its clients get only the usual variables`);
    }
  }
  return async () => {
    await Promise.all(undo.map((done) => done().catch(() => undefined)));
  };
}
