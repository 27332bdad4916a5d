/**
 * `kit world twins`, `root`, `credential`, `refresh`, `links`, `link`: a twin's root (the real
 * vendor account it keeps a copy of), the credential sealed for it or for a link, a refresh now,
 * and the links, through `{world_api}/twins/…` and `{world_api}/links`. world-commands.ts adds
 * these to the `kit world` group.
 *
 * A secret never comes from the command line (it would show in `ps` and the shell's history):
 * `credential seal` reads it from an environment variable it is told the name of, or the whole
 * credential as JSON from standard input; there is no flag that takes a secret's value. Nothing
 * printed holds one: the world answers only whether a credential is sealed, and when.
 */
import type { RootConfig } from '../../runtime/roots/config.js';
import type { RefreshReport } from '../../runtime/runner/roots.js';
import { UsageError } from './args.js';
import { CliError, request, requestJson, segment } from './client.js';
import type { Endpoint } from './client.js';
import { flag, printAnswer } from './commands.js';
import type { Command, Invocation } from './commands.js';
import { keyValues, printable, table } from './format.js';
import type { WorldTarget } from './targets.js';

/** `GET …/twins/<vendor>/root`, or null. */
type RootAnswer = RootConfig;

interface CredentialAnswer {
  sealed: boolean;
  sealedAt: string | null;
}

/** A twin's status as `GET …/twins` lists it; read loosely, it came over the wire. */
interface TwinStatus {
  vendor: string;
  root: RootAnswer | null;
  credential: CredentialAnswer | null;
  lastRefresh: RefreshReport | null;
  lastRefreshAttempt: RefreshReport | null;
  nextRefreshAt: string | null;
  position: number;
}

interface LinkRow {
  name: string;
  origin: string;
  createdAt: string;
  credential: CredentialAnswer;
}

/** The largest credential a world seals (runtime/roots/config.ts `MAX_CREDENTIAL_BYTES`). */
const MAX_CREDENTIAL_BYTES = 16 * 1024;
/** A duration as the world reads one (runtime/world/time.ts `parseDuration`). */
const DURATION = /^[1-9]\d{0,12}[smhd]$/;
/** An environment variable's name as people write them; another name is not repeated in a message (it may be a secret typed in its place). */
const CONVENTIONAL_VARIABLE = /^[A-Z_][A-Z0-9_]{0,63}$/;

const api = (t: WorldTarget): Endpoint => ({ base: t.worldApi, token: t.token });

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** `sealed since <instant>`, or `-`. */
function credentialCell(c: CredentialAnswer | null | undefined): string {
  return c?.sealed === true ? `sealed since ${c.sealedAt ?? '?'}` : '-';
}

/** The last refresh attempt, in a cell: `<observed at> ok`, or `<finished at> failed (<code>)`. */
function refreshCell(s: TwinStatus): string {
  const attempt = s.lastRefreshAttempt ?? s.lastRefresh;
  if (attempt === null || attempt === undefined) return '-';
  if (attempt.ok) return `${attempt.observedAt ?? attempt.finishedAt} ok`;
  return `${attempt.finishedAt} failed (${attempt.error?.code ?? 'unknown'})`;
}

function printRoot(call: Invocation, vendor: string, root: RootAnswer): void {
  const pairs: [string, unknown][] = [
    ['url', root.url],
    ['deploy', root.deploy],
    ['refresh at most', root.refresh?.atMost ?? "- (the twin's own)"],
    ['refresh every', root.refresh?.every ?? "- (the twin's own, if any)"],
  ];
  call.io.out(`the root of ${printable(vendor)}:`);
  for (const line of keyValues(pairs)) call.io.out(`  ${line}`);
}

/**
 * A secret's value from the environment variable `variable` that `--<flagName>` names. A
 * missing or empty one is bad usage; its name is repeated only when it looks like one (a
 * secret typed where the name goes must not land in a log as well).
 */
export function secretFromEnv(call: Invocation, flagName: string, variable: string): string {
  const shown = CONVENTIONAL_VARIABLE.test(variable) ? variable : null;
  const value = /^[A-Za-z_][A-Za-z0-9_]*$/.test(variable) ? call.deps.env[variable] : undefined;
  if (value === undefined) {
    throw new UsageError(
      shown !== null
        ? `--${flagName} names ${shown}, which is not set in the environment: export ${shown}=… first (kit never takes the secret itself on the command line)`
        : `--${flagName} takes the name of an environment variable that holds the secret (STRIPE_SECRET_KEY), not the secret; the one given is not set (not repeated here, in case it is the secret)`,
    );
  }
  if (value === '') throw new UsageError(`--${flagName} names ${shown ?? 'a variable'}, which is empty`);
  return value;
}

/** The credential's JSON body from the `--…-env` flags. */
function credentialFromEnv(call: Invocation): Record<string, unknown> | null {
  const body: Record<string, unknown> = {};
  const bearerVar = flag(call, 'bearer-env');
  if (bearerVar !== undefined) body['bearer'] = secretFromEnv(call, 'bearer-env', bearerVar);
  const headerSpecs = call.lists['header-env'] ?? [];
  if (headerSpecs.length > 0) {
    const headers: Record<string, string> = {};
    for (const spec of headerSpecs) {
      const eq = spec.indexOf('=');
      // Nothing of a malformed one is repeated: it may hold a secret typed in place of a variable's name.
      if (eq <= 0 || eq === spec.length - 1) throw new UsageError("--header-env is NAME=VAR (x-api-key=VENDOR_API_KEY): the header NAME's value is read from the environment variable VAR");
      const name = spec.slice(0, eq);
      const lower = name.toLowerCase();
      if (Object.keys(headers).some((h) => h.toLowerCase() === lower)) throw new UsageError(`--header-env gives the header ${printable(name)} twice`);
      headers[name] = secretFromEnv(call, 'header-env', spec.slice(eq + 1));
    }
    body['headers'] = headers;
  }
  const signingVar = flag(call, 'signing-secret-env');
  if (signingVar !== undefined) body['signingSecret'] = secretFromEnv(call, 'signing-secret-env', signingVar);
  return Object.keys(body).length === 0 ? null : body;
}

/** What was sealed, by name only: `headers authorization (bearer), x-api-version and a signing secret`. */
function describeSealed(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const b = body as Record<string, unknown>;
  const names: string[] = [];
  if (typeof b['headers'] === 'object' && b['headers'] !== null) names.push(...Object.keys(b['headers']).map((n) => n.toLowerCase()));
  if (b['bearer'] !== undefined) names.push('authorization (bearer)');
  const parts: string[] = [];
  if (names.length > 0) parts.push(`${names.length === 1 ? 'the header' : 'the headers'} ${names.map((n) => printable(n)).join(', ')}`);
  if (b['signingSecret'] !== undefined) parts.push('a webhook signing secret');
  return parts.length === 0 ? null : parts.join(' and ');
}

/** `refresh_throttled` and a failed refresh, told as a person at a terminal needs them. */
function refreshFailure(e: CliError, vendor: string): CliError {
  if (e.code === 'refresh_throttled') {
    const after = e.extra.retryAfterS ?? (typeof e.extra.details?.['retryAfterS'] === 'number' ? e.extra.details['retryAfterS'] : undefined);
    const when = after === undefined ? 'later' : `in ${plural(after, 'second')} (after ${new Date(Date.now() + after * 1000).toISOString()})`;
    return new CliError(e.code, `${printable(vendor)} was refreshed less than its refresh.atMost ago; try again ${when}, or refresh now with --force`, e.extra);
  }
  // The world names its endpoint; a person at the terminal needs the command.
  if (e.code === 'no_root') return new CliError(e.code, `${printable(vendor)} has no root: kit world root set ${printable(vendor)} <url> gives it one`, e.extra);
  const report = e.extra.details?.['refresh'] as RefreshReport | undefined;
  if (report === undefined || typeof report.reads !== 'number') return e;
  const done = report.written + report.deleted === 0 ? 'nothing written' : `${plural(report.entries, 'entry', 'entries')} kept: ${report.written} written, ${report.deleted} deleted`;
  return new CliError(e.code, `the refresh of ${printable(vendor)} failed after ${plural(report.reads, 'read')} (${done}): ${e.message}`, e.extra);
}

const SEAL_HELP = [
  'Seals the real credential a twin\'s refreshes (and deploys) or a link\'s forwards present to the',
  'vendor: its headers replace the caller\'s same-named ones. The world encrypts it at rest and never',
  'shows it again, anywhere; sealing again replaces it. A signing secret enables webhook ingest.',
  '',
  'No flag takes a secret\'s value: one on the command line shows in `ps` and the shell\'s history.',
  'Name the environment variable that holds it (--bearer-env STRIPE_SECRET_KEY), or pipe the whole',
  'credential as JSON into --stdin: { "headers": { … }, "bearer": "…", "signingSecret": "…" }.',
  'A variable that is not set or is empty is refused, and nothing is sent.',
].join('\n');

export const ROOT_COMMANDS: Command<WorldTarget>[] = [
  {
    words: ['twins'],
    args: '',
    summary: 'every twin: its root, its sealed credential, its last refresh and its position',
    help: 'LAST REFRESH is the last attempt: when it observed the root and ok, or when it failed and the code. The read token opens this one.',
    arity: [0, 0],
    async run(t, call) {
      const answer = await requestJson<{ twins: TwinStatus[] }>(api(t), 'GET', '/twins');
      if (call.json) return printAnswer(call, answer.text);
      const twins = answer.value?.twins;
      if (!Array.isArray(twins)) throw new CliError('bad_answer', 'the world answered twins that are not a list');
      const rows = twins.map((s) => [s.vendor, s.root?.url ?? '-', credentialCell(s.credential), refreshCell(s), s.nextRefreshAt ?? '-', s.position]);
      for (const line of table(['vendor', 'root', 'credential', 'last refresh', 'next refresh', 'position'], rows)) call.io.out(line);
      return 0;
    },
  },
  {
    words: ['root'],
    args: '<vendor>',
    summary: "a twin's root: the vendor URL it copies, its deploy policy and refresh",
    arity: [1, 1],
    async run(t, call) {
      const vendor = call.args[0] as string;
      const answer = await requestJson<RootAnswer | null>(api(t), 'GET', `/twins/${segment(vendor)}/root`);
      if (call.json) return printAnswer(call, answer.text);
      if (answer.value === null) {
        call.io.out(`${printable(vendor)} has no root: kit world root set ${printable(vendor)} <url> gives it one`);
        return 0;
      }
      printRoot(call, vendor, answer.value);
      return 0;
    },
  },
  {
    words: ['root', 'set'],
    args: '<vendor> <url>',
    summary: 'give a twin a root: the real vendor account it copies (replaces the one it has)',
    help: [
      'The twin copies the vendor account at <url> on each refresh, with the credential sealed for it',
      '(kit world credential seal). The root is replaced whole: a flag not given takes its default. A URL',
      'the world must not reach (not https, a private, link-local or metadata address) is refused',
      '(destination_refused); http is taken only to loopback, where the world allows it (for local',
      'tests). A twin that keeps no copy of a vendor takes no root (invalid_root).',
    ].join('\n'),
    flags: [
      { name: 'deploy', kind: 'string', value: 'auto|manual', help: 'auto: a push performs its changes on the root; manual (default): a deploy does' },
      { name: 'refresh-at-most', kind: 'string', value: 'D', help: "refresh at most once per D (30s, 15m, 1h, 1d): the throttle of kit world refresh (default the twin's)" },
      { name: 'refresh-every', kind: 'string', value: 'D', help: "refresh on a schedule, every D (at least 1m; default the twin's, if any)" },
    ],
    arity: [2, 2],
    async run(t, call) {
      const [vendor, url] = call.args as [string, string];
      const body: Record<string, unknown> = { url };
      const deploy = flag(call, 'deploy');
      if (deploy !== undefined) {
        if (deploy !== 'auto' && deploy !== 'manual') throw new UsageError(`--deploy is auto or manual, got "${deploy}"`);
        body['deploy'] = deploy;
      }
      const refresh: Record<string, string> = {};
      for (const [name, field] of [['refresh-at-most', 'atMost'], ['refresh-every', 'every']] as const) {
        const value = flag(call, name);
        if (value === undefined) continue;
        if (!DURATION.test(value)) throw new UsageError(`--${name} is a duration like 30s, 15m, 1h or 1d, got "${value}"`);
        refresh[field] = value;
      }
      if (Object.keys(refresh).length > 0) body['refresh'] = refresh;
      const answer = await requestJson<RootAnswer>(api(t), 'PUT', `/twins/${segment(vendor)}/root`, { json: body });
      if (call.json) return printAnswer(call, answer.text);
      printRoot(call, vendor, answer.value);
      call.io.out('');
      call.io.out(`Next: kit world credential seal ${printable(vendor)} --bearer-env VAR, then kit world refresh ${printable(vendor)}`);
      return 0;
    },
  },
  {
    words: ['root', 'clear'],
    args: '<vendor>',
    summary: "clear a twin's root: no more refreshes (the records it copied stay)",
    arity: [1, 1],
    async run(t, call) {
      const vendor = call.args[0] as string;
      const answer = await requestJson<null>(api(t), 'PUT', `/twins/${segment(vendor)}/root`, { json: null });
      if (call.json) return printAnswer(call, answer.text);
      call.io.out(`kit: cleared the root of ${printable(vendor)}; the records it copied stay`);
      return 0;
    },
  },
  {
    words: ['credential'],
    args: '<name>',
    summary: 'whether a credential is sealed for a twin or a link, and since when (never its value)',
    arity: [1, 1],
    async run(t, call) {
      const name = call.args[0] as string;
      const answer = await requestJson<CredentialAnswer>(api(t), 'GET', `/twins/${segment(name)}/credential`);
      if (call.json) return printAnswer(call, answer.text);
      const c = answer.value;
      for (const line of keyValues([['credential of', name], ['sealed', c?.sealed === true ? 'yes' : 'no'], ['since', c?.sealed === true ? c.sealedAt : '-']])) call.io.out(line);
      return 0;
    },
  },
  {
    words: ['credential', 'seal'],
    args: '<name>',
    summary: "seal a twin's or a link's real credential, from the environment or standard input (never argv)",
    help: SEAL_HELP,
    flags: [
      { name: 'bearer-env', kind: 'string', value: 'VAR', help: 'the bearer token (authorization: Bearer …) is the value of the environment variable VAR' },
      { name: 'header-env', kind: 'list', value: 'NAME=VAR', help: 'the header NAME is the value of the environment variable VAR; repeat for more headers' },
      { name: 'signing-secret-env', kind: 'string', value: 'VAR', help: "the vendor's webhook signing secret is the value of VAR" },
      { name: 'stdin', kind: 'boolean', help: 'read the credential as JSON from standard input instead (at most 16 KiB)' },
    ],
    arity: [1, 1],
    async run(t, call) {
      const name = call.args[0] as string;
      const fromEnv = credentialFromEnv(call);
      let body: string;
      if (call.flags['stdin'] === true) {
        if (fromEnv !== null) throw new UsageError('--stdin reads the whole credential: it takes no --bearer-env, --header-env or --signing-secret-env');
        const bytes = await call.deps.readStdin(MAX_CREDENTIAL_BYTES);
        if (bytes.byteLength > MAX_CREDENTIAL_BYTES) throw new CliError('credential_too_large', 'standard input holds more than 16 KiB; a credential is at most 16 KiB of JSON');
        body = new TextDecoder().decode(bytes);
        if (body.trim() === '') throw new UsageError('--stdin read nothing: pipe the credential in as JSON, { "bearer": "…" }');
      } else {
        if (fromEnv === null) throw new UsageError('kit world credential seal needs --bearer-env VAR, --header-env NAME=VAR, --signing-secret-env VAR or --stdin (never the secret itself)');
        body = JSON.stringify(fromEnv);
      }
      const answer = await requestJson<CredentialAnswer>(api(t), 'PUT', `/twins/${segment(name)}/credential`, { body, contentType: 'application/json' });
      if (call.json) return printAnswer(call, answer.text);
      let parsed: unknown = fromEnv;
      if (parsed === null) {
        try {
          parsed = JSON.parse(body);
        } catch {
          parsed = null;
        }
      }
      const what = describeSealed(parsed);
      call.io.out(`kit: sealed the credential of ${printable(name)} at ${printable(answer.value?.sealedAt)}${what === null ? '' : `: ${what}`}`);
      call.io.out('The world never shows it again; kit world credential shows that it is sealed.');
      return 0;
    },
  },
  {
    words: ['credential', 'remove'],
    args: '<name>',
    summary: 'remove the credential sealed for a twin or a link',
    help: 'Refreshes and forwards go on without it (the vendor will likely refuse them).',
    arity: [1, 1],
    async run(t, call) {
      const name = call.args[0] as string;
      await request(api(t), 'DELETE', `/twins/${segment(name)}/credential`);
      if (!call.json) call.io.out(`kit: removed the credential sealed for ${printable(name)}`);
      return 0;
    },
  },
  {
    words: ['refresh'],
    args: '<vendor>',
    summary: "observe a twin's root now: what it read and wrote, or why it failed (exit 1)",
    help: [
      "The twin reads the vendor account at its root with the sealed credential; each answer it folds is",
      "an entry caused by the refresh. Refreshes are throttled to the root's refresh.atMost (else the",
      "twin's): a refresh too soon is refused (refresh_throttled) with when to try again.",
    ].join('\n'),
    flags: [{ name: 'force', kind: 'boolean', help: 'refresh now even if the throttle says not yet' }],
    arity: [1, 1],
    async run(t, call) {
      const vendor = call.args[0] as string;
      let answer: { value: { twin: string; refresh: RefreshReport }; text: string };
      try {
        answer = await requestJson(api(t), 'POST', `/twins/${segment(vendor)}/refresh`, { query: { force: call.flags['force'] === true ? 1 : undefined }, timeoutMs: 10 * 60_000 });
      } catch (e) {
        throw e instanceof CliError ? refreshFailure(e, vendor) : e;
      }
      if (call.json) return printAnswer(call, answer.text);
      const r = answer.value?.refresh;
      if (typeof r?.reads !== 'number') throw new CliError('bad_answer', 'the world answered no refresh report');
      call.io.out(`kit: refreshed ${printable(vendor)} from its root`);
      const pairs: [string, unknown][] = [
        ['observed at', r.observedAt],
        ['reads', r.reads],
        ['entries', r.entries],
        ['written', r.written],
        ['deleted', r.deleted],
        ['duration', `${r.durationMs} ms`],
      ];
      for (const line of keyValues(pairs)) call.io.out(`  ${line}`);
      return 0;
    },
  },
  {
    words: ['links'],
    args: '',
    summary: "list the world's links: {world_url}/<name>/… forwarded to a real vendor",
    arity: [0, 0],
    async run(t, call) {
      const answer = await requestJson<{ links: LinkRow[] }>(api(t), 'GET', '/links');
      if (call.json) return printAnswer(call, answer.text);
      const links = answer.value?.links;
      if (!Array.isArray(links)) throw new CliError('bad_answer', 'the world answered links that are not a list');
      if (links.length === 0) {
        call.io.out(`${t.name} has no links`);
        return 0;
      }
      for (const line of table(['name', 'origin', 'credential', 'created'], links.map((l) => [l.name, l.origin, credentialCell(l.credential), l.createdAt]))) call.io.out(line);
      return 0;
    },
  },
  {
    words: ['link', 'set'],
    args: '<name> <origin>',
    summary: 'forward {world_url}/<name>/… to the vendor at <origin> (https://<host>), with the credential sealed for <name>',
    help: [
      'Stateless: no log, no records. The caller presents the world\'s token (a read token or a browser',
      'session is refused); the sealed credential\'s headers replace the caller\'s same-named ones. A',
      'twin\'s name is not a link\'s (link_names_twin). Setting it again changes its origin.',
    ].join('\n'),
    arity: [2, 2],
    async run(t, call) {
      const [name, origin] = call.args as [string, string];
      const answer = await requestJson<{ name: string; origin: string; createdAt: string }>(api(t), 'PUT', `/links/${segment(name)}`, { json: { origin } });
      if (call.json) return printAnswer(call, answer.text);
      const l = answer.value;
      call.io.out(`kit: ${printable(t.worldUrl)}/${printable(l.name)}/… forwards to ${printable(l.origin)}`);
      call.io.out(`It forwards with the credential sealed for it: kit world credential seal ${printable(l.name)} --bearer-env VAR`);
      return 0;
    },
  },
  {
    words: ['link', 'remove'],
    args: '<name>',
    summary: 'remove a link, and the credential sealed for it',
    arity: [1, 1],
    async run(t, call) {
      const name = call.args[0] as string;
      await request(api(t), 'DELETE', `/links/${segment(name)}`);
      if (!call.json) call.io.out(`kit: removed link ${printable(name)} and the credential sealed for it`);
      return 0;
    },
  },
];
