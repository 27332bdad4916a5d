/**
 * Builds the attach manifest (`GET {world_url}/.well-known/kit-world`) from what each twin's
 * manifest says: its protocol, the vendor hosts it models and the endpoint variables its
 * client reads. The shape is `sdk/attach/manifest.ts`; docs/attach.md explains it.
 */
import type { AttachCa, AttachManifest, AttachProxy, AttachStream } from '../../sdk/attach/manifest.js';

/** What the host knows of a twin, for attach. */
export interface AttachTwin {
  vendor: string;
  /** `http`, or a TCP protocol reached through a stream (`smtp`, …). Default `http`. */
  protocol?: string;
  /** Vendor hosts the twin answers for (`api.stripe.com`). */
  hosts?: readonly string[];
  /** Variables a client reads for its endpoint (`GITHUB_API_URL`; `SMTP_HOST`, `SMTP_PORT`). */
  endpointEnv?: readonly string[];
}

export interface AttachManifestInput {
  name: string;
  /** `{world_url}`, no trailing slash. */
  worldUrl: string;
  /** `{world_api}`, no trailing slash. */
  worldApi: string;
  /** The token the manifest was asked with: it becomes `KIT_TWINS_KEY`. */
  token: string;
  twins: readonly AttachTwin[];
  ca: AttachCa | null;
  /** The proxy's URL; its `hosts` come from the twins. Null when no proxy runs. */
  proxyUrl: string | null;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/**
 * The template of one stream variable. Names say what a client expects: `…_HOST` a host,
 * `…_PORT` a port, `…_URL`/`…_URI` a URL of the twin's protocol, anything else `host:port`.
 */
export function streamVariable(name: string, protocol: string): string {
  const upper = name.toUpperCase();
  if (upper.endsWith('HOST')) return '{host}';
  if (upper.endsWith('PORT')) return '{port}';
  if (upper.endsWith('URL') || upper.endsWith('URI')) return `${protocol}://{host}:{port}`;
  return '{host}:{port}';
}

/** The manifest for one token. Twin order is kept; a host claimed twice goes to the first twin. */
export function buildAttachManifest(input: AttachManifestInput): AttachManifest {
  const vendors: Record<string, string> = {};
  const env: Record<string, string> = { KIT_TWINS_KEY: input.token };
  const streams: Record<string, AttachStream> = {};
  const hosts: Record<string, string> = {};
  const wsApi = input.worldApi.replace(/^http/, 'ws');
  for (const twin of input.twins) {
    const url = `${input.worldUrl}/${twin.vendor}`;
    vendors[twin.vendor] = url;
    const protocol = twin.protocol ?? 'http';
    const variables = (twin.endpointEnv ?? []).filter((n) => ENV_NAME.test(n) && n !== 'KIT_TWINS_KEY');
    if (protocol === 'http') {
      for (const name of variables) env[name] ??= url;
      for (const h of twin.hosts ?? []) {
        const host = h.toLowerCase();
        if (!(host in hosts)) hosts[host] = twin.vendor;
      }
    } else {
      const streamEnv: Record<string, string> = {};
      for (const name of variables) streamEnv[name] = streamVariable(name, protocol);
      streams[twin.vendor] = { url: `${wsApi}/streams/${twin.vendor}`, protocol, env: streamEnv };
    }
  }
  const proxy: AttachProxy | null = input.proxyUrl === null ? null : { url: input.proxyUrl, hosts: Object.keys(hosts) };
  return { name: input.name, vendors, hosts, ca: input.ca, proxy, env, streams };
}
