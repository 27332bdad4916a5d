/**
 * What a language of sdk/attach/languages/ is given and answers (index.ts runs them). Apart
 * from index.ts so that a language's file and the list that names it do not import each other.
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
  /** The hosts the world's proxy answers from its twins (the manifest's `proxy.hosts`; empty without a proxy). */
  hosts: readonly string[];
  /** A line for the user on kit's standard error (a language that could not be set up says why). */
  warn(line: string): void;
}

export interface AttachLanguage {
  /** `python`, `java`, … */
  name: string;
  /** May answer what to undo when the command ends (a listener it started). */
  prepare(ctx: AttachContext): Promise<void | (() => Promise<void>)>;
}
