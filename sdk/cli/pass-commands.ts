/**
 * `kit pass <command>`: passes tried on this machine (docs/passes.md). `issuer` serves a
 * signer's public keys as a platform would; `sign` prints the URL that opens a world's page
 * with a pass; `rotate` makes a new signing key. The keys live in a folder (`--dir`, default
 * `.kit-pass`): whoever reads its keys.json can sign passes.
 */
import { resolve } from 'node:path';
import { createPassSigner, generatePassKey, PassFileError, passKeysPath, PUBLISHED_KEYS, readPassIssuer, readPassKeys, startPassIssuer, writePassKeys } from '../passes/index.js';
import { KEYS_COOLDOWN_MS } from '../../host/core/access/passes.js';
import { parsePort, UsageError } from './args.js';
import { CliError } from './client.js';
import { flag, wholeFlag } from './commands.js';
import type { ClientDeps, Command, CommandGroup } from './commands.js';
import { keyValues } from './format.js';
import { parseWorldName, worldUrls } from './targets.js';

export const DEFAULT_PASS_DIR = '.kit-pass';
export const DEFAULT_ISSUER_PORT = 4460;

export interface PassTarget {
  /** The signer's folder, absolute. */
  dir: string;
  /** As given, for the lines a person copies. */
  given: string;
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * The world a pass is for, and its origin when the text says it: `<org>/<world>` (no origin),
 * a world URL or API URL on this machine (`http://127.0.0.1:4440/local/shop`: the origin is
 * `http://shop--local.localhost:4440`, as every local host gives it), or the world's origin
 * itself (`http://shop--local.localhost:4440/`, what `kit world serve` prints as its page).
 */
export function passWorldOf(text: string): { world: string; origin: string | null } {
  if (!/^[a-z][a-z0-9+.-]*:/i.test(text)) {
    const { org, world } = parseWorldName(text);
    return { world: `${org}/${world}`, origin: null };
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--world must be <org>/<world>, a world URL or the world's origin, got "${text}"`);
  }
  if (url.pathname === '/' || url.pathname === '') {
    const label = url.hostname.split('.')[0] ?? '';
    const split = label.indexOf('--');
    const org = label.slice(split + 2);
    const world = label.slice(0, split);
    if (split <= 0 || url.hostname.indexOf('.') < 0) throw new UsageError(`--world: ${text} is not a world's origin (<world>--<org>.localhost:<port>) nor a world URL (…/<org>/<world>)`);
    const { org: o, world: w } = parseWorldName(`${org}/${world}`);
    return { world: `${o}/${w}`, origin: url.origin };
  }
  let name: string;
  try {
    name = worldUrls(text).name;
  } catch (e) {
    throw new UsageError(`--world: ${(e as Error).message}`);
  }
  const [org, world] = name.split('/') as [string, string];
  const label = `${world}--${org}`;
  const origin = isLoopback(url.hostname) && !world.includes('--') && label.length <= 63 ? `http://${label}.localhost${url.port === '' ? '' : `:${url.port}`}` : null;
  return { world: name, origin };
}

async function keysOf(t: PassTarget) {
  try {
    return await readPassKeys(t.dir);
  } catch (e) {
    if (e instanceof PassFileError) throw new CliError(e.code, e.message);
    throw e;
  }
}

function noKeys(t: PassTarget): CliError {
  return new CliError('no_keys', `no pass keys in ${t.dir}: start \`kit pass issuer --dir ${t.given}\` first (it makes them)`);
}

const commands: Command<PassTarget>[] = [
  {
    words: ['issuer'],
    args: '',
    summary: 'serve the keys of a local pass issuer, as a platform does (until Ctrl-C)',
    help: [
      `Serves GET /.well-known/jwks.json, the public keys of the signer kept in --dir (made there`,
      'the first time). A host that trusts it (kit world serve --trust <issuer>) fetches them to',
      'check the passes kit pass sign makes. It signs nothing over HTTP.',
    ].join('\n'),
    flags: [
      { name: 'port', kind: 'string', value: 'N', help: `port to listen on (default ${DEFAULT_ISSUER_PORT}: the issuer's URL is what hosts trust, so keep it)` },
      { name: 'host', kind: 'string', value: 'H', help: 'address to listen on (default 127.0.0.1)' },
    ],
    arity: [0, 0],
    async run(t, call) {
      const port = flag(call, 'port') === undefined ? DEFAULT_ISSUER_PORT : parsePort(flag(call, 'port')!);
      const host = flag(call, 'host') ?? '127.0.0.1';
      if (host === '') throw new UsageError('--host needs an address');
      let issuer: Awaited<ReturnType<typeof startPassIssuer>>;
      try {
        issuer = await startPassIssuer({ dir: t.dir, host, port });
      } catch (e) {
        if (e instanceof PassFileError) throw new CliError(e.code, e.message);
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE') throw new CliError('port_in_use', `${host}:${port} is in use (an issuer already running?); pass --port N for another`);
        throw new CliError('issuer_failed', e instanceof Error ? e.message : String(e));
      }
      const lines = [
        'kit: serving a pass issuer',
        '',
        ...keyValues([
          ['issuer', issuer.url],
          ['keys', issuer.jwksUrl],
          ['signing key', await issuer.kid()],
          ['keys file', `${passKeysPath(t.dir)}  (private: whoever reads it signs passes)`],
        ]).map((l) => `  ${l}`),
        '',
        'Trust it, and sign a pass (it prints the URL to open in a browser):',
        `  kit world serve --trust ${issuer.url}`,
        `  kit pass sign --dir ${t.given} --world http://127.0.0.1:4440/local/<world> --scope write --subject ada`,
        '',
        'Ctrl-C stops it.',
      ];
      for (const line of lines) call.io.out(line);
      const signal = await call.deps.untilStopped();
      call.io.out(`kit: ${signal}: stopping`);
      await issuer.close();
      call.io.out('kit: stopped');
      return 0;
    },
  },
  {
    words: ['sign'],
    args: '',
    summary: "sign a pass and print the URL that opens the world's page with it",
    help: [
      'Prints <world origin>/#pass=<pass>: open it in a browser. The pass rides in the URL\'s',
      'fragment, which the browser never sends to a server; the page posts it to the world once,',
      'and it is spent. It is good for --ttl seconds (default 300, at most 600).',
      '',
      '--world is <org>/<world> (then --origin is needed), a world URL on this machine (its',
      'origin is <world>--<org>.localhost:<port>), or the world\'s origin itself.',
    ].join('\n'),
    flags: [
      { name: 'world', kind: 'string', value: 'W', help: 'the world: <org>/<world>, its URL, or its origin', required: true },
      { name: 'scope', kind: 'string', value: 'read|write', help: 'what the session it opens may do', required: true },
      { name: 'subject', kind: 'string', value: 'ID', help: 'the person, as the platform knows them', required: true },
      { name: 'origin', kind: 'string', value: 'O', help: "the world's origin (default: from --world)" },
      { name: 'name', kind: 'string', value: 'N', help: "the person's display name" },
      { name: 'ttl', kind: 'string', value: 'S', help: 'seconds the pass is good for (default 300, at most 600)' },
      { name: 'issuer', kind: 'string', value: 'URL', help: 'the iss of the pass (default: the issuer kit pass issuer wrote in --dir)' },
    ],
    arity: [0, 0],
    async run(t, call) {
      const need = (name: string): string => {
        const v = flag(call, name);
        if (v === undefined || v === '') throw new UsageError(`kit pass sign needs --${name}`);
        return v;
      };
      const target = passWorldOf(need('world'));
      const scope = need('scope');
      if (scope !== 'read' && scope !== 'write') throw new UsageError(`--scope must be read or write, got "${scope}"`);
      const subject = need('subject');
      const origin = flag(call, 'origin') ?? target.origin;
      if (origin === null) throw new UsageError(`name the world's origin with --origin (the world page kit world serve prints, http://<world>--<org>.localhost:<port>)`);
      const ttl = wholeFlag(call, 'ttl', 1);
      const keys = await keysOf(t);
      if (keys === null) throw noKeys(t);
      let issuerUrl = flag(call, 'issuer');
      if (issuerUrl === undefined) {
        try {
          issuerUrl = (await readPassIssuer(t.dir)) ?? undefined;
        } catch (e) {
          if (e instanceof PassFileError) throw new CliError(e.code, e.message);
          throw e;
        }
      }
      if (issuerUrl === undefined) throw new CliError('no_issuer', `${t.dir} names no issuer: start \`kit pass issuer --dir ${t.given}\` once, or pass --issuer <url>`);
      let pass: string;
      let signer;
      try {
        signer = await createPassSigner({ issuer: issuerUrl, keys });
        const name = flag(call, 'name');
        pass = await signer.sign({ world: target.world, origin, scope, subject, ...(name !== undefined ? { name } : {}), ...(ttl !== undefined ? { ttlSeconds: ttl } : {}), now: Date.now() });
      } catch (e) {
        if (e instanceof TypeError) throw new UsageError(e.message);
        throw e;
      }
      const url = `${origin.replace(/\/$/, '')}/#pass=${pass}`;
      if (call.json) {
        call.io.out(JSON.stringify({ url, pass, issuer: signer.issuer, world: target.world, origin: origin.replace(/\/$/, ''), scope, subject }));
        return 0;
      }
      call.io.out(url);
      return 0;
    },
  },
  {
    words: ['rotate'],
    args: '',
    summary: 'make a new signing key; the previous ones stay published',
    help: [
      `The issuer serves the new key with the ${PUBLISHED_KEYS - 1} before it at its next request (passes already`,
      'signed stay good). A host fetches the keys again for a key id it does not know, at most',
      `once every ${KEYS_COOLDOWN_MS / 1000} s: a pass signed with the new key may be refused as pass_unknown_key for`,
      'that long after the host last fetched them.',
    ].join('\n'),
    arity: [0, 0],
    async run(t, call) {
      const keys = await keysOf(t);
      if (keys === null) throw noKeys(t);
      const next = await generatePassKey();
      const published = [next, ...keys].slice(0, PUBLISHED_KEYS);
      try {
        await writePassKeys(t.dir, published);
      } catch (e) {
        throw new CliError('unwritable_file', `cannot write ${passKeysPath(t.dir)}: ${(e as Error).message}`);
      }
      if (call.json) {
        call.io.out(JSON.stringify({ kid: next.kid, published: published.map((k) => k.kid) }));
        return 0;
      }
      call.io.out(`kit: passes are signed with the key ${next.kid} now; published: ${published.map((k) => k.kid).join(', ')}`);
      return 0;
    },
  },
];

export const PASS_COMMANDS: CommandGroup<PassTarget> = {
  name: 'pass',
  commands,
  flags: [{ name: 'dir', kind: 'string', value: 'DIR', help: `the signer's folder: its keys.json and issuer (default ${DEFAULT_PASS_DIR})` }],
  footer: [
    'Passes let a person into a world\'s page from a platform the world trusts (docs/passes.md).',
    'These commands play that platform on this machine. A failure prints one line,',
    'kit: <message> (<code>), and exits 1; bad usage exits 2. See docs/cli.md.',
  ].join('\n'),
  target: async (flags, deps: ClientDeps) => {
    const given = typeof flags['dir'] === 'string' && flags['dir'] !== '' ? flags['dir'] : DEFAULT_PASS_DIR;
    return { dir: resolve(deps.cwd, given), given };
  },
};
