/**
 * `kit host twin install|list|remove`: the host's installed twins (`/-/twins`,
 * docs/installed-twins.md) with the admin token. `install` takes a twin's folder (built here with
 * `buildTwin`, as `kit twin build` builds it) or the bundle a build wrote; a bundle's vendor is
 * read from its manifest in a sandbox lane (QuickJS), never by running it in this process.
 */
import { readFile, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { KitError } from '../../runtime/errors.js';
import { nodeGuestEngines } from '../../runtime/runner/node-engines.js';
import { checkUntrustedTwin } from '../../runtime/runner/twin-check.js';
import { buildTwin } from '../twin/build.js';
import { UsageError } from './args.js';
import { CliError, request, requestJson, segment } from './client.js';
import { flag, printAnswer } from './commands.js';
import type { ClientDeps, Command } from './commands.js';
import { bytes, printable, table } from './format.js';
import type { HostTarget } from './targets.js';

/** As the hosts take it (host/multi-world/installed-twins.ts MAX_TWIN_BYTES). */
const MAX_TWIN_BYTES = 4 * 1024 * 1024;
/** A token read from standard input: far more than any token's length. */
const MAX_TOKEN_BYTES = 4096;

interface InstalledAnswer {
  vendor: string;
  version: string;
  sha256: string;
  installedAt: string;
}

interface TwinRow {
  vendor: string;
  version: string;
  protocol: string;
  installed: boolean;
  sha256: string | null;
  installedAt: string | null;
  bytes: number | null;
}

const STDIN_FLAG = { name: 'stdin', kind: 'boolean', help: "read the host's admin token from standard input (instead of --token or $KIT_HOST_TOKEN)" } as const;

/** `--stdin`: the admin token, piped in. */
async function tokenFromStdin(flags: Record<string, string | true>, deps: ClientDeps): Promise<Record<string, string>> {
  if (flags['stdin'] !== true) return {};
  const token = new TextDecoder().decode(await deps.readStdin(MAX_TOKEN_BYTES)).trim();
  if (token === '') throw new UsageError('--stdin read nothing: pipe the admin token in');
  return { token };
}

/** The bundle to send and its vendor: a folder built here, or a bundle file read as is. */
async function bundleOf(path: string, vendorFlag: string | undefined): Promise<{ vendor: string; source: string }> {
  let isDir: boolean;
  try {
    isDir = (await stat(path)).isDirectory();
  } catch {
    throw new CliError('unreadable_file', `${printable(path)} is neither a twin's folder nor a bundle file`);
  }
  if (isDir) {
    const entry = [join(path, 'twin', 'index.ts'), join(path, 'index.ts')].find((p) => existsSync(p));
    if (entry === undefined) throw new CliError('invalid_twin', `${printable(path)} has no twin/index.ts (nor index.ts): a twin's folder is what kit twin new makes`);
    try {
      const built = await buildTwin(entry);
      if (vendorFlag !== undefined && vendorFlag !== built.vendor) throw new CliError('twin_vendor_mismatch', `--vendor ${vendorFlag}, but the twin's manifest names ${built.vendor}`);
      return { vendor: built.vendor, source: built.source };
    } catch (e) {
      if (e instanceof KitError) throw new CliError(e.code, e.message);
      throw e;
    }
  }
  const raw = await readFile(path);
  if (raw.byteLength > MAX_TWIN_BYTES) throw new CliError('twin_too_large', `${printable(path)} is ${bytes(raw.byteLength)}; a host takes a bundle of at most 4 MiB`);
  const source = raw.toString('utf8');
  if (vendorFlag !== undefined) return { vendor: vendorFlag, source };
  // The vendor is the bundle's own: asked of it in QuickJS, under the sandbox's budgets.
  const lane = nodeGuestEngines.lane({ name: 'kit host twin install' });
  try {
    const manifest = await checkUntrustedTwin(lane, source, { label: path });
    return { vendor: manifest.vendor, source };
  } catch (e) {
    if (e instanceof KitError) throw new CliError(e.code, e.message);
    throw e;
  } finally {
    await lane.close();
  }
}

export const TWIN_COMMANDS: Command<HostTarget>[] = [
  {
    words: ['twin', 'install'],
    args: '[<host-url>] <twin dir | bundle.js>',
    summary: "install a twin of your own for the host's worlds (a folder is built first); replaces an earlier install",
    help: [
      'A folder is built as kit twin build builds it (its twin/index.ts); a .js file is sent as it is.',
      "The host loads it in its sandbox, reads its manifest there and refuses a bundle that does not load, exports no twin,",
      "claims a built-in twin's vendor id or declares routes that clash. Worlds serve it untrusted: kit host create <org>/<world> --vendors <vendor>.",
      'Replacing it closes the worlds that serve it: each runs the new code from its next request.',
    ].join('\n'),
    flags: [{ name: 'vendor', kind: 'string', value: 'V', help: "the vendor id (default: the twin's manifest's)" }, STDIN_FLAG],
    arity: [1, 2],
    targetFlags: async (call, deps) => ({ ...(call.args.length === 2 ? { url: call.args[0] as string } : {}), ...(await tokenFromStdin(call.flags, deps)) }),
    async run(t, call) {
      const path = resolve(call.deps.cwd, call.args[call.args.length - 1] as string);
      const { vendor, source } = await bundleOf(path, flag(call, 'vendor'));
      const response = await request(t, 'PUT', `/-/twins/${segment(vendor)}`, { body: source, contentType: 'application/javascript', timeoutMs: 120_000 });
      const text = await response.text();
      if (call.json) return printAnswer(call, text);
      const answer = JSON.parse(text) as InstalledAnswer;
      const how = response.status === 201 ? 'installed' : 'replaced';
      call.io.out(`kit: ${how} twin ${printable(answer.vendor)} ${printable(answer.version)} on ${t.base} (sha256 ${answer.sha256.slice(0, 12)})`);
      call.io.out(`  a world with it: kit host create <org>/<world> --vendors ${printable(answer.vendor)}`);
      return 0;
    },
  },
  {
    words: ['twin', 'list'],
    args: '',
    summary: 'the twins of the host: built-in and installed',
    flags: [STDIN_FLAG],
    arity: [0, 0],
    targetFlags: (call, deps) => tokenFromStdin(call.flags, deps),
    async run(t, call) {
      const answer = await requestJson<{ twins: TwinRow[] }>(t, 'GET', '/-/twins');
      if (call.json) return printAnswer(call, answer.text);
      const rows = answer.value.twins.map((r) => [
        r.vendor,
        r.version,
        r.installed ? 'installed' : 'built-in',
        r.sha256 === null ? '-' : r.sha256.slice(0, 12),
        r.bytes === null ? '-' : bytes(r.bytes),
        r.installedAt ?? '-',
      ]);
      for (const line of table(['vendor', 'version', 'kind', 'sha256', 'size', 'installed at'], rows)) call.io.out(line);
      return 0;
    },
  },
  {
    words: ['twin', 'remove'],
    args: '<vendor>',
    summary: 'remove an installed twin (not while a world serves it)',
    flags: [STDIN_FLAG],
    arity: [1, 1],
    targetFlags: (call, deps) => tokenFromStdin(call.flags, deps),
    async run(t, call) {
      const vendor = call.args[0] as string;
      await request(t, 'DELETE', `/-/twins/${segment(vendor)}`);
      if (!call.json) call.io.out(`kit: removed twin ${printable(vendor)} from ${t.base}`);
      return 0;
    },
  },
];
