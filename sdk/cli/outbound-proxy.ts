/**
 * The proxy a served world's calls to real vendors go through (docs/roots.md), from the
 * environment: `KIT_OUTBOUND_PROXY` (`http://[user:password@]host:port`) and `KIT_OUTBOUND_CA`
 * (a PEM file of the CA it presents). Read by `kit world serve` and `kit host serve` alike.
 */
import { readFile } from 'node:fs/promises';
import { UsageError } from './args.js';

export interface OutboundProxyOption {
  url: string;
  caFile?: string;
}

/** The proxy the environment names, or undefined. Throws `UsageError` for one that is not `http://host:port`. */
export function outboundProxyFromEnv(env: Record<string, string | undefined>): OutboundProxyOption | undefined {
  const url = env['KIT_OUTBOUND_PROXY'];
  if (url === undefined || url === '') return undefined;
  // Never repeated: its user info may be a password.
  if (!/^http:\/\/[^/]+\/?$/.test(url)) throw new UsageError('KIT_OUTBOUND_PROXY must be http://[user:password@]host:port');
  const caFile = env['KIT_OUTBOUND_CA'];
  return { url, ...(caFile !== undefined && caFile !== '' ? { caFile } : {}) };
}

/** The proxy as the hosts take it: its URL and its CA's PEM, read now. */
export async function loadOutboundProxy(option: OutboundProxyOption | undefined): Promise<{ url: string; ca?: string } | undefined> {
  if (option === undefined) return undefined;
  return { url: option.url, ...(option.caFile !== undefined ? { ca: await readFile(option.caFile, 'utf8') } : {}) };
}
