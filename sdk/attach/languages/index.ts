/**
 * What `kit world attach` sets for each language beyond the variables every tool reads
 * (HTTPS_PROXY, SSL_CERT_FILE, …; sdk/cli/attach.ts): the counterpart of Node's
 * `--import twinkit/attach` for a language whose clients or vendor SDKs ignore those (a CA
 * bundle of their own, a proxy setting of their own). Each language is a file of this folder;
 * all run, in this order, before the command starts. Node-only (the CLI runs them).
 */

/** What a language is given: the world's CA and proxy as attach made them, and the command's environment to add to. */
export interface AttachContext {
  /** A folder of its own for this run (removed when the command ends). */
  temp: string;
  /** The environment the command will get; a language adds to it. */
  env: NodeJS.ProcessEnv;
  /** The environment kit was started with (what the user already set). */
  baseEnv: NodeJS.ProcessEnv;
  /** The world's CA (PEM), or null when the world gives none. */
  worldCa: string | null;
  /** The bundle attach wrote: the usual roots plus the world's CA (what SSL_CERT_FILE names), or null. */
  caBundle: string | null;
  /** The world's proxy URL with the token as its password, or null. */
  proxyUrl: string | null;
  /** Hosts reached without the proxy (NO_PROXY, comma-separated). */
  noProxy: string;
  /** A line for the user on kit's standard error (a language that could not be set up says why). */
  warn(line: string): void;
}

export interface AttachLanguage {
  /** `python`, `java`, … */
  name: string;
  prepare(ctx: AttachContext): Promise<void>;
}

/** Every language attach prepares, in order. */
export const LANGUAGES: readonly AttachLanguage[] = [];

/** Prepares every language; one that fails warns and leaves the others (and the command) as they are. */
export async function prepareLanguages(ctx: AttachContext, languages: readonly AttachLanguage[] = LANGUAGES): Promise<void> {
  for (const language of languages) {
    try {
      await language.prepare(ctx);
    } catch (e) {
      ctx.warn(`kit: could not prepare ${language.name} for the world (${e instanceof Error ? e.message : String(e)}); its clients get only the usual variables`);
    }
  }
}
