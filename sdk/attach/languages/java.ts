/**
 * Java, attached with no change to the app: the JVM reads neither HTTPS_PROXY nor
 * SSL_CERT_FILE, so attach appends to `JAVA_TOOL_OPTIONS` (read by every JVM the command
 * starts, Gradle's and Maven's included):
 *
 * - `https.proxyHost`/`https.proxyPort`: a loopback relay (proxy-relay.ts) in front of the
 *   world's proxy, since Java sends no proxy credentials without an `Authenticator` in the app.
 *   `HttpURLConnection` (stripe-java, most SDKs) reads them, and so does `HttpClient` through its
 *   default `ProxySelector`. `http.nonProxyHosts` from NO_PROXY (Java's syntax: `a|*.b`).
 * - `javax.net.ssl.trustStore`: a PKCS#12 beside the world's CA holding the JDK's own roots (or
 *   the trust store the user's JAVA_TOOL_OPTIONS already named) plus the world's CA.
 *
 * The JDK is the `java` on the command's PATH (else JAVA_HOME's); with none, Java is left alone.
 */
import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { basename, delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { AttachContext, AttachLanguage } from './types.js';
import { startProxyRelay } from './proxy-relay.js';
import { pemCertificates, readTrustStore, writePkcs12TrustStore, type TrustedCert } from './java-truststore.js';

const run = promisify(execFile);

/** What `http.nonProxyHosts` holds when nobody sets it (JDK 17's DefaultProxySelector); setting it replaces these. */
const JAVA_DEFAULT_NON_PROXY = ['localhost', '127.*', '[::1]', '0.0.0.0', '[::0]'];
/** The password of every JDK's cacerts, unless its owner changed it. */
const CACERTS_PASSWORD = 'changeit';
export const WORLD_CA_ALIAS = 'kit-world-ca';

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return await isFile(path);
  } catch {
    return false;
  }
}

/** The home of the JDK a command would run: `java` on PATH (links followed), else JAVA_HOME. Null when neither has a JDK. */
export async function findJavaHome(env: NodeJS.ProcessEnv): Promise<string | null> {
  const candidates: string[] = [];
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir === '' || !(await executable(join(dir, 'java')))) continue;
    const real = await realpath(join(dir, 'java')).catch(() => null);
    if (real !== null && basename(dirname(real)) === 'bin') candidates.push(dirname(dirname(real)));
    break;
  }
  const javaHome = env['JAVA_HOME'];
  if (javaHome !== undefined && javaHome !== '') candidates.push(javaHome);
  for (const home of candidates) if ((await cacertsOf(home)) !== null) return home;
  return null;
}

/** The trust store a JDK uses when none is named: `jssecacerts` if there is one, else `cacerts` (JDK 9+, then JDK 8's jre/). */
async function cacertsOf(home: string): Promise<string | null> {
  for (const folder of [join(home, 'lib', 'security'), join(home, 'jre', 'lib', 'security')]) {
    for (const name of ['jssecacerts', 'cacerts']) if (await isFile(join(folder, name))) return join(folder, name);
  }
  return null;
}

/**
 * JAVA_TOOL_OPTIONS split as the JVM splits it: on white space, a `'…'` or `"…"` section
 * taken whole (quotes dropped, no escapes).
 */
export function splitJavaOptions(text: string): string[] {
  const out: string[] = [];
  let current: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (/\s/.test(c)) {
      if (current !== null) out.push(current);
      current = null;
    } else if (c === '"' || c === "'") {
      const end = text.indexOf(c, i + 1);
      current = (current ?? '') + text.slice(i + 1, end < 0 ? text.length : end);
      i = end < 0 ? text.length : end;
    } else current = (current ?? '') + c;
  }
  if (current !== null) out.push(current);
  return out;
}

/** The `-D` properties of a JAVA_TOOL_OPTIONS value (the last one of a name wins, as in the JVM). */
function systemProperties(text: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const option of splitJavaOptions(text ?? '')) {
    const m = /^-D([^=]+)=(.*)$/s.exec(option);
    if (m) out.set(m[1] as string, m[2] as string);
  }
  return out;
}

/** `-Dname=value` as one JAVA_TOOL_OPTIONS word (quoted when it holds white space). */
export function javaOption(name: string, value: string): string {
  const option = `-D${name}=${value}`;
  if (!/[\s"']/.test(option)) return option;
  if (!option.includes('"')) return `"${option}"`;
  if (!option.includes("'")) return `'${option}'`;
  throw new Error(`${name} would be ${value}, which holds both kinds of quote: JAVA_TOOL_OPTIONS cannot carry it`);
}

/**
 * NO_PROXY (curl's syntax: `a.example`, `.b.example`, `*`, `host:port`, `[::1]`) as Java's
 * `http.nonProxyHosts` (`a.example|*.a.example|…`), after Java's own default and whatever the
 * user already gave Java. Entries Java cannot express (address ranges such as `10.0.0.0/8`)
 * are dropped: those hosts go through the proxy, which refuses private addresses anyway.
 */
export function javaNonProxyHosts(noProxy: string, userJavaValue?: string): string {
  // The user's own entries are kept as Java reads them, but for any that could not travel in JAVA_TOOL_OPTIONS.
  const out: string[] = [...JAVA_DEFAULT_NON_PROXY, ...(userJavaValue ?? '').split('|').filter((h) => /^[A-Za-z0-9.*_:[\]-]+$/.test(h))];
  for (const raw of noProxy.split(',')) {
    let host = raw.trim().toLowerCase();
    if (host === '') continue;
    if (host === '*') {
      out.push('*');
      continue;
    }
    const v6 = /^\[([0-9a-f:.]+)\](?::\d+)?$/.exec(host);
    if (v6) host = v6[1] as string;
    else if (!host.includes('::')) host = host.replace(/:\d+$/, '');
    if (host.includes(':')) {
      if (/^[0-9a-f:.]+$/.test(host)) out.push(`[${host}]`);
      continue;
    }
    host = host.replace(/^\*?\./, '');
    if (!/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(host)) continue;
    out.push(host);
    if (!/^[0-9.]+$/.test(host)) out.push(`*.${host}`);
  }
  return [...new Set(out.map((h) => h.trim()).filter((h) => h !== ''))].join('|');
}

/** A trust store Node cannot read (encrypted, JCEKS, …) as keytool lists it: each entry's first certificate. */
async function listWithKeytool(home: string, path: string, password: string, type: string | undefined): Promise<TrustedCert[]> {
  const args = ['-list', '-rfc', '-keystore', path, '-storepass', password, ...(type ? ['-storetype', type] : [])];
  const { stdout } = await run(join(home, 'bin', 'keytool'), args, { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
  const out: TrustedCert[] = [];
  for (const section of stdout.split(/^Alias name: /m).slice(1)) {
    const alias = (section.split('\n')[0] as string).trim();
    const first = pemCertificates(section)[0];
    if (first !== undefined) out.push({ alias, der: first });
  }
  return out;
}

/** Writes the trust store (the JDK's roots, or the user's store, plus the world's CA) into `temp`; answers its path. */
async function writeTrustStore(ctx: AttachContext, home: string, userProperties: Map<string, string>, worldCa: string): Promise<string> {
  const named = userProperties.get('javax.net.ssl.trustStore');
  const source = named !== undefined && named !== '' && named !== 'NONE' ? named : await cacertsOf(home);
  if (source === null) throw new Error(`no cacerts in the JDK at ${home}`);
  const bytes = await readFile(source);
  const password = named !== undefined ? (userProperties.get('javax.net.ssl.trustStorePassword') ?? CACERTS_PASSWORD) : CACERTS_PASSWORD;
  const roots = readTrustStore(bytes) ?? (await listWithKeytool(home, source, password, named !== undefined ? userProperties.get('javax.net.ssl.trustStoreType') : undefined));
  const world = pemCertificates(worldCa)[0];
  if (world === undefined) throw new Error("the world's CA is not a PEM certificate");
  const path = join(ctx.temp, 'java-truststore.p12');
  await writeFile(path, writePkcs12TrustStore([...roots, { alias: WORLD_CA_ALIAS, der: world }]), { mode: 0o600 });
  return path;
}

async function prepare(ctx: AttachContext): Promise<(() => Promise<void>) | void> {
  if (ctx.worldCa === null && ctx.proxyUrl === null) return;
  const home = await findJavaHome(ctx.baseEnv);
  if (home === null) return; // no JDK: nothing here runs Java
  if (ctx.temp.includes('"') && ctx.temp.includes("'")) {
    ctx.warn(`kit: Java is not prepared for the world: the temporary folder ${ctx.temp} has both kinds of quote in its path, which JAVA_TOOL_OPTIONS cannot carry (set TMPDIR to another folder)`);
    return;
  }
  const prior = ctx.baseEnv['JAVA_TOOL_OPTIONS'];
  const userProperties = systemProperties(prior);
  const options: string[] = [];
  if (ctx.worldCa !== null) {
    const trustStore = await writeTrustStore(ctx, home, userProperties, ctx.worldCa);
    // A password-less store: Java reads it with or without a password, so one the user set stays harmless.
    options.push(javaOption('javax.net.ssl.trustStore', trustStore), javaOption('javax.net.ssl.trustStoreType', 'PKCS12'));
  }
  let close: (() => Promise<void>) | undefined;
  if (ctx.proxyUrl !== null) {
    const nonProxy = javaOption('http.nonProxyHosts', javaNonProxyHosts(ctx.noProxy, userProperties.get('http.nonProxyHosts')));
    // Last: nothing below can fail and leave it running.
    const relay = await startProxyRelay({ upstream: ctx.proxyUrl });
    close = relay.close;
    options.push(javaOption('https.proxyHost', relay.host), javaOption('https.proxyPort', String(relay.port)), nonProxy);
  }
  const ours = options.join(' ');
  ctx.env['JAVA_TOOL_OPTIONS'] = prior === undefined || prior.trim() === '' ? ours : `${prior} ${ours}`;
  return close;
}

/** Java's `HttpURLConnection` and `HttpClient` (docs/attach.md, "Apps in other languages"). */
export const java: AttachLanguage = { name: 'java', prepare };
