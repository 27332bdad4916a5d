/**
 * `kit world changeset cut|list|show|verify|approve|push|deploy` and `kit world origin
 * [show]|set|pull|push`: a world's own vendor-API changes cut into a changeset, reviewed as a
 * diff, verified by the world's checks, approved, pushed to another world (its origin, or any
 * world by URL) and deployed to the twins' roots, through `{world_api}/changesets`, `/push`,
 * `/deploy` and `/origin` (docs/cli.md). world-commands.ts adds these to the `kit world` group;
 * changeset-diff.ts renders what a person reads.
 *
 * The token of another world (an origin, a world pushed to) is a secret: it comes from an
 * environment variable a flag names, or from standard input, never from argv (where `ps` and
 * the shell's history keep it), as `kit world credential seal` reads a credential.
 */
import { UsageError } from './args.js';
import { CliError, request, requestJson, segment } from './client.js';
import type { Endpoint } from './client.js';
import {
  approvalLine,
  changesetDiff,
  changesOf,
  cut,
  DEFAULT_LIMITS,
  objectsOf,
  perTwin,
  receiptLine,
  requestLine,
  shownValue,
  verificationFailures,
  verificationText,
} from './changeset-diff.js';
import type { DiffLimits, WireApproval, WireChangeset, WireReceipt, WireVerification } from './changeset-diff.js';
import { flag, printAnswer } from './commands.js';
import type { Command, Invocation } from './commands.js';
import { keyValues, printable, table } from './format.js';
import { secretFromEnv } from './root-commands.js';
import { worldUrls } from './targets.js';
import type { WorldTarget, WorldUrls } from './targets.js';

/** A changeset's name as the world takes one. */
const CHANGESET_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
/** A token read from standard input is at most this long (a world token is a few dozen characters). */
const MAX_TOKEN_BYTES = 4096;
/** Verify, deploy and the origin's commands may reach a vendor or another world: longer than a small answer may take. */
const LONG_TIMEOUT_MS = 10 * 60_000;

const api = (t: WorldTarget): Endpoint => ({ base: t.worldApi, token: t.token });

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The changeset a positional argument names, checked so it cannot name another path (`..`). */
function changesetName(text: string, what = 'a changeset'): string {
  if (!CHANGESET_NAME.test(text)) {
    throw new UsageError(`${what} is named with lower-case letters, digits, '.', '_' and '-' (1 to 64, starting with a letter or digit), got "${printable(text)}"`);
  }
  return text;
}

/** `kit world changeset …` needs the answer to be a changeset: one that is not is `bad_answer`. */
function changesetOf(value: unknown): WireChangeset {
  if (!isObject(value) || typeof value['name'] !== 'string') throw new CliError('bad_answer', 'the world answered something that is not a changeset');
  return value as WireChangeset;
}

/** `stripe 2, github 1`: how many changes of a changeset each twin has. */
function changesPerTwin(cs: WireChangeset): string {
  const counts = new Map<string, number>();
  for (const c of changesOf(cs)) counts.set(printable(c.twin), (counts.get(printable(c.twin)) ?? 0) + 1);
  return [...counts].map(([twin, n]) => `${twin} ${n}`).join(', ');
}

/** A token (an origin's, another world's) from the variable `--<envFlag>` names or from standard input; never from argv. */
async function tokenFrom(call: Invocation, envFlag: string, command: string): Promise<string> {
  const variable = flag(call, envFlag);
  const fromStdin = call.flags['stdin'] === true;
  if (variable !== undefined && fromStdin) throw new UsageError(`--${envFlag} and --stdin both give the token: give one`);
  let token: string;
  if (variable !== undefined) token = secretFromEnv(call, envFlag, variable).trim();
  else if (fromStdin) {
    const bytes = await call.deps.readStdin(MAX_TOKEN_BYTES);
    if (bytes.byteLength > MAX_TOKEN_BYTES) throw new CliError('bad_token', 'standard input holds more than 4 KiB; pipe in the token alone');
    token = new TextDecoder().decode(bytes).trim();
    if (token === '') throw new UsageError('--stdin read nothing: pipe the token in (kit never takes it on the command line)');
  } else {
    throw new UsageError(`${command} needs the other world's token: --${envFlag} VAR (the environment variable that holds it) or --stdin (never the token itself)`);
  }
  // It goes in a header; not repeated in the message (it is a secret).
  if (!/^[\x21-\x7e]+$/.test(token)) throw new CliError('bad_token', "the token holds spaces or control characters; give it as the world's server printed it");
  return token;
}

/** A world URL given with `--<name>` (or as `<url>`), either of its forms; a usage error when it is not one. */
function otherWorld(text: string, what: string): WorldUrls {
  try {
    return worldUrls(text);
  } catch (e) {
    if (e instanceof CliError) throw new UsageError(`${what}: ${e.message}`);
    throw e;
  }
}

/** `stripe is at 15, the changeset applies on 12`, for a `base_not_current`. */
function driftText(details: Record<string, unknown> | undefined): string | null {
  // The world pushed to answers the drift; an origin push passes the origin's answer on whole.
  const passedOn = isObject(details?.['origin']) && isObject(details['origin']['error']) ? details['origin']['error']['drift'] : undefined;
  const drift = details?.['drift'] ?? passedOn;
  if (!isObject(drift)) return null;
  const parts = Object.entries(drift).map(([twin, d]) => (isObject(d) ? `${printable(twin)} is at ${printable(d['current'])}, the changeset applies on ${printable(d['base'])}` : printable(twin)));
  return parts.length === 0 ? null : parts.join('; ');
}

/**
 * A refusal as a person at a terminal needs it: the world names its endpoints and JSON bodies,
 * the person needs the command that comes next. `pushedTo` is the world a push went to (`the
 * origin`, `local/staging`).
 */
function withHint(e: CliError, name: string | null, pushedTo: string | null = null): CliError {
  const named = name === null ? '<name>' : printable(name);
  const said = e.message.replace(/\.$/, '');
  const details = e.extra.details;
  const messages: Record<string, () => string> = {
    unknown_changeset: () => `${said}: kit world changeset list shows the changesets`,
    // A deploy of every changeset names the one refused only in the world's words.
    changeset_not_verified: () => (name === null ? `${said} (kit world changeset verify <name>)` : `${named} has no verification of its current version: kit world changeset verify ${named} first`),
    verification_failed: () => `${said}: kit world changeset show ${named} shows what failed`,
    changeset_hash_changed: () => `${said}: kit world changeset show ${named} shows it`,
    no_root: () => `${said}: kit world root set <twin> <url> gives it one`,
    no_credential: () => `${said}: kit world credential seal <twin> --bearer-env VAR`,
    deploy_failed: () => `${said} (kit world changeset deploy ${typeof details?.['changeset'] === 'string' ? printable(details['changeset']) : named} --confirm)`,
    base_not_current: () => {
      const refused = typeof details?.['refused'] === 'string' ? printable(details['refused']) : named;
      const drift = driftText(details);
      const moved = `${pushedTo ?? 'the world pushed to'} refused ${refused}: it has moved past the changeset's base${drift === null ? '' : ` (${drift})`}`;
      return pushedTo === 'the origin' ? `${moved}; kit world origin pull brings its changes here, then push again` : moved;
    },
    pull_conflicts: () => {
      const n = objectsOf(details?.['conflicts']).length;
      return `the origin changed ${plural(n, 'field')} this world changed too; nothing was pulled: choose with --resolve KEY=ours|theirs, or --take ours|theirs for every conflict`;
    },
    no_origin: () => `${said}: kit world origin set <url> --token-env VAR names one`,
  };
  const message = messages[e.code];
  return message === undefined ? e : new CliError(e.code, message(), e.extra);
}

/** Runs `work`; a refusal gets the next step in its message. */
async function hinted<T>(name: string | null, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw e instanceof CliError ? withHint(e, name) : e;
  }
}

/** `pass`, `FAIL`, `stale` (made on an earlier version) or `-`: a changeset's verification in a cell. */
function verifiedCell(v: WireVerification | null | undefined): string {
  if (v === null || v === undefined) return '-';
  if (v.current !== true) return 'stale';
  return v.pass === true ? 'pass' : 'FAIL';
}

/** `2`, `1 (+1 earlier)`: approvals on the current hash, and on earlier versions. */
function approvalsCell(approvals: readonly WireApproval[]): string {
  const current = approvals.filter((a) => a.current === true).length;
  const earlier = approvals.length - current;
  return earlier === 0 ? String(current) : `${current} (+${earlier} earlier)`;
}

/** Where a changeset went or came from: `to <url>`, `landed <at>`, `-`. */
function pushedCell(cs: WireChangeset): string {
  if (isObject(cs.pushed)) return `to ${printable(cs.pushed.to)}`;
  if (typeof cs.landedAt === 'string') return `landed ${cs.landedAt}`;
  return '-';
}

/** The header of `changeset show`: name, message, where it was cut, its hash, what became of it. */
function headerLines(cs: WireChangeset, limits: DiffLimits): string[] {
  const changed = cs.contentHash !== cs.currentHash;
  const approvals = objectsOf<WireApproval>(cs.approvals);
  const pairs: [string, unknown][] = [
    ['changeset', cs.name],
    ['message', cut(typeof cs.message === 'string' ? cs.message : '', limits.valueChars * 3)],
    ['cut', `${printable(cs.cutAt)} in ${printable(cs.from)}`],
    ['base', perTwin(cs.base)],
    ['hash', changed ? `CHANGED outside the world: stored ${printable(cs.contentHash)}, now ${printable(cs.currentHash)}` : cs.contentHash],
  ];
  if (isObject(cs.pushed)) pairs.push(['pushed', `to ${printable(cs.pushed.to)} at ${printable(cs.pushed.at)}`]);
  if (typeof cs.landedAt === 'string') pairs.push(['landed', `${cs.landedAt} (pushed here)`]);
  pairs.push(['verified', verificationText(cs.verification, typeof cs.name === 'string' ? cs.name : '<name>')]);
  pairs.push(['approvals', approvals.length === 0 ? 'none yet' : approvalsCell(approvals)]);
  pairs.push(['deployed', cs.deployed]);
  // keyValues escapes each value again; the ones built here are escaped already and hold nothing it would change.
  const lines = keyValues(pairs);
  const indent = ' '.repeat(Math.max(...pairs.map(([k]) => k.length)) + 2);
  const failures = cs.verification?.current === true ? verificationFailures(cs.verification, limits) : [];
  const at = (label: string): number => lines.findIndex((l) => l.startsWith(`${label} `));
  lines.splice(at('approvals') + 1, 0, ...approvals.map((a) => `${indent}${approvalLine(a, limits)}`));
  lines.splice(at('verified') + 1, 0, ...failures.map((f) => `${indent}${f}`));
  return lines;
}

/** `2 changes performed on the roots`: the changes with a receipt that went through (a retried one has a failed receipt too). */
function performed(receipts: readonly WireReceipt[]): string {
  const done = new Set(receipts.filter((r) => r.ok === true).map((r) => r.change)).size;
  return `${plural(done, 'change')} performed on the roots`;
}

/** The receipts of a deploy, one line each: `change 1  stripe  deployed at …`. */
function receiptLines(receipts: readonly WireReceipt[]): string[] {
  return receipts.map((r) => `  change ${typeof r.change === 'number' ? r.change + 1 : '?'}  ${printable(r.twin)}  ${receiptLine(r)}`);
}

/** Prints a deploy's result for one changeset: `kit: deployed cs-1 (all)`, then its receipts. */
function printDeployed(call: Invocation, result: unknown): void {
  const r = isObject(result) ? result : {};
  const cs = isObject(r['changeset']) ? r['changeset']['name'] : r['changeset'];
  const receipts = objectsOf<WireReceipt>(r['receipts']);
  const state = r['deployed'] ?? (isObject(r['changeset']) ? r['changeset']['deployed'] : undefined);
  call.io.out(`kit: deployed ${printable(cs)} (${printable(state)}): ${performed(receipts)}`);
  for (const line of receiptLines(receipts)) call.io.out(line);
}

/** The changesets a deploy would perform, with what each still has to do, for the plan `deploy` prints without --confirm. */
function planLines(changesets: readonly WireChangeset[]): string[] {
  const lines: string[] = [];
  for (const cs of changesets) {
    const left = changesOf(cs).filter((c) => c.state !== 'deployed');
    if (left.length === 0) continue;
    const verified = { '-': 'not verified', stale: 'verified on an earlier version', pass: 'verified', FAIL: 'FAILED its checks' }[verifiedCell(cs.verification)];
    lines.push(`  ${printable(cs.name)}  ${plural(left.length, 'change')} to perform; ${verified}; ${plural(objectsOf<WireApproval>(cs.approvals).filter((a) => a.current === true).length, 'approval')}`);
    // A changeset past the ones read whole has its changes counted only.
    const detailed = left.filter((c) => isObject(c.request));
    for (const c of detailed.slice(0, 20)) lines.push(`    ${printable(c.twin)}  ${requestLine(c.request)}${c.state === 'failed' ? '  (failed before: retried)' : ''}`);
    if (detailed.length > 20) lines.push(`    … ${plural(detailed.length - 20, 'more change')}`);
  }
  return lines;
}

/** `--resolve KEY=ours|theirs`, repeated, as the body's `resolve`. */
function resolutions(call: Invocation): Record<string, 'ours' | 'theirs'> {
  const resolve: Record<string, 'ours' | 'theirs'> = {};
  for (const spec of call.lists['resolve'] ?? []) {
    const eq = spec.lastIndexOf('=');
    const side = spec.slice(eq + 1);
    if (eq <= 0 || (side !== 'ours' && side !== 'theirs')) throw new UsageError(`--resolve is KEY=ours or KEY=theirs (the KEY a conflict is listed with), got "${printable(spec)}"`);
    resolve[spec.slice(0, eq)] = side;
  }
  return resolve;
}

/** The conflicts of a `pull_conflicts`, as a table a person chooses from. */
function conflictLines(conflicts: readonly Record<string, unknown>[]): string[] {
  const rows = conflicts.map((c) => [c['key'], shownValue(c['base'], 30), shownValue(c['ours'], 30), shownValue(c['theirs'], 30)]);
  return table(['key', 'base', 'ours', 'theirs'], rows);
}

/** `stripe 3 entries, github 1 entry`, or null when the map is empty (or every count is 0). */
function entriesPerTwin(value: unknown): string | null {
  if (!isObject(value)) return null;
  const parts = Object.entries(value).filter(([, n]) => n !== 0).map(([twin, n]) => `${printable(twin)} ${typeof n === 'number' ? plural(n, 'entry', 'entries') : printable(n)}`);
  return parts.length === 0 ? null : parts.join(', ');
}

/** `stripe 13–14`: the positions a push appended, per twin. */
function appendedText(value: unknown): string {
  return perTwin(value, (v) => (Array.isArray(v) && v.length === 2 ? (v[0] === v[1] ? printable(v[0]) : `${printable(v[0])}–${printable(v[1])}`) : printable(v)));
}

/** One changeset a push appended: `kit: pushed cs-1 to <where>: appended stripe 13–14`, and its deploy under `deploy: auto`. */
function printPushed(call: Invocation, where: string, item: Record<string, unknown>): void {
  const cs = isObject(item['changeset']) ? item['changeset']['name'] : item['changeset'];
  call.io.out(`kit: pushed ${printable(cs)} to ${where}: appended ${appendedText(item['appended'])}`);
  const verification = item['verification'] ?? (isObject(item['changeset']) ? item['changeset']['verification'] : undefined);
  const deployed = item['deployed'];
  const receipts = objectsOf<WireReceipt>(isObject(deployed) ? deployed['receipts'] : item['receipts']);
  // Under a root with deploy: auto the push verified, and deployed what passed.
  if (isObject(verification) && (isObject(deployed) || item['verification'] !== undefined)) call.io.out(`  verified ${verificationText(verification as WireVerification)}`);
  if (isObject(deployed) || receipts.length > 0) {
    const error = isObject(deployed) && isObject(deployed['error']) ? deployed['error'] : null;
    call.io.out(error === null
      ? `  deployed (deploy: auto): ${performed(receipts)}`
      : `  the deploy (deploy: auto) stopped: ${printable(error['message'])} (${printable(error['code'])})`);
    for (const line of receiptLines(receipts)) call.io.out(`  ${line}`);
  }
}

const TOKEN_HELP = "No flag takes the token's value: name the environment variable that holds it, or pipe it into --stdin.";

export const CHANGESET_COMMANDS: Command<WorldTarget>[] = [
  {
    words: ['changeset', 'cut'],
    args: '',
    summary: "cut this world's unpushed vendor-API changes into a changeset, to review, push and deploy",
    help: [
      'A changeset holds every vendor-API request of this world that wrote something since its last cut',
      '(and since it last matched its origin), each with what it wrote, record by record. Its name is',
      'cs-<n> unless --name gives one. Nothing to cut is refused (nothing_to_cut).',
    ].join('\n'),
    flags: [
      { name: 'message', kind: 'string', short: 'm', value: 'TEXT', required: true, help: 'what the changes are for, as a commit message says' },
      { name: 'name', kind: 'string', value: 'N', help: "its name (lower case, digits, '.', '_', '-'); default cs-<n>" },
    ],
    arity: [0, 0],
    async run(t, call) {
      const message = flag(call, 'message');
      if (message === undefined || message.trim() === '') throw new UsageError('kit world changeset cut needs -m <message>: what the changes are for');
      const name = flag(call, 'name');
      const body: Record<string, unknown> = { message };
      if (name !== undefined) body['name'] = changesetName(name, '--name');
      const answer = await hinted(name ?? null, () => requestJson<unknown>(api(t), 'POST', '/changesets', { json: body }));
      if (call.json) return printAnswer(call, answer.text);
      const cs = changesetOf(answer.value);
      const n = changesOf(cs).length;
      call.io.out(`kit: cut ${printable(cs.name)}: ${plural(n, 'change')} (${changesPerTwin(cs)}), hash ${printable(cs.contentHash)}`);
      call.io.out(`Next: kit world changeset show ${printable(cs.name)}, then verify, approve, push or deploy it`);
      return 0;
    },
  },
  {
    words: ['changeset', 'list'],
    args: '',
    summary: 'the changesets, newest first, and the changes not cut yet',
    help: 'VERIFIED is pass, FAIL, stale (made on an earlier version) or -; APPROVALS counts those on the current hash; PUSHED is where this world pushed it, or when it landed here.',
    arity: [0, 0],
    async run(t, call) {
      const answer = await requestJson<{ changesets?: unknown; unpushed?: unknown }>(api(t), 'GET', '/changesets');
      if (call.json) return printAnswer(call, answer.text);
      if (!isObject(answer.value) || !Array.isArray(answer.value.changesets)) throw new CliError('bad_answer', 'the world answered changesets that are not a list');
      const changesets = objectsOf<WireChangeset>(answer.value.changesets);
      if (changesets.length === 0) call.io.out(`${t.name} has no changesets`);
      else {
        const rows = changesets.map((cs) => [
          cs.name,
          cs.cutAt,
          typeof cs.changeCount === 'number' ? cs.changeCount : changesOf(cs).length,
          verifiedCell(cs.verification),
          approvalsCell(objectsOf<WireApproval>(cs.approvals)),
          cs.deployed,
          pushedCell(cs),
          `${cs.contentHash !== cs.currentHash ? '(CHANGED) ' : ''}${cut(typeof cs.message === 'string' ? cs.message : '', 60)}`,
        ]);
        for (const line of table(['name', 'cut', 'changes', 'verified', 'approvals', 'deployed', 'pushed', 'message'], rows)) call.io.out(line);
      }
      const unpushed = answer.value.unpushed;
      const counts = isObject(unpushed) ? Object.entries(unpushed).filter(([, n]) => typeof n === 'number' && n > 0) : [];
      call.io.out('');
      if (counts.length === 0) call.io.out('no changes to cut');
      else call.io.out(`not cut yet: ${counts.map(([twin, n]) => `${printable(twin)} ${plural(n as number, 'change')}`).join(', ')} (kit world changeset cut -m <message>)`);
      return 0;
    },
  },
  {
    words: ['changeset', 'show'],
    args: '<name>',
    summary: 'a changeset as a diff: per change the request and status, per record each field before → after',
    help: [
      'Each change: its twin, the vendor request, the status the twin answered, and its state (landed,',
      'deployed, failed). Under it each record it wrote, field by field (nested fields as a.b.c, list',
      'items as a[0]): `name: (none) → "Pro"`; a record created or deleted says so. Long values are cut,',
      'and the twin\'s own bookkeeping records (types beginning __) counted, unless --full / --internal;',
      '--type shows the records of the types named, counting the others.',
    ].join('\n'),
    flags: [
      { name: 'type', kind: 'list', value: 'T', help: 'show only the records of type T (product); repeat for more' },
      { name: 'internal', kind: 'boolean', help: 'also show the records of types beginning __ (the twin\'s own bookkeeping)' },
      { name: 'full', kind: 'boolean', help: 'cut nothing: every value whole, every field and record' },
    ],
    arity: [1, 1],
    async run(t, call) {
      const name = changesetName(call.args[0] as string);
      const answer = await hinted(name, () => requestJson<unknown>(api(t), 'GET', `/changesets/${segment(name)}`));
      if (call.json) return printAnswer(call, answer.text);
      const cs = changesetOf(answer.value);
      const limits: DiffLimits = {
        ...(call.flags['full'] === true ? { valueChars: Number.MAX_SAFE_INTEGER, fieldsPerRecord: Number.MAX_SAFE_INTEGER, recordsPerChange: Number.MAX_SAFE_INTEGER } : DEFAULT_LIMITS),
        internal: call.flags['internal'] === true,
        types: call.lists['type'] ?? null,
      };
      for (const line of headerLines(cs, limits)) call.io.out(line);
      call.io.out('');
      for (const line of changesetDiff(cs, limits)) call.io.out(line);
      return 0;
    },
  },
  {
    words: ['changeset', 'verify'],
    args: '<name>',
    summary: "run the world's checks over a changeset's changes; exit 1 when one fails",
    help: 'The verification is kept with the hash it was made on; a deploy takes only a changeset whose current hash passed. A failing check prints what failed and exits 1 (verification_failed).',
    arity: [1, 1],
    async run(t, call) {
      const name = changesetName(call.args[0] as string);
      const answer = await hinted(name, () => requestJson<WireVerification>(api(t), 'POST', `/changesets/${segment(name)}/verify`, { timeoutMs: LONG_TIMEOUT_MS }));
      const v = answer.value;
      if (!isObject(v) || typeof v.pass !== 'boolean') throw new CliError('bad_answer', 'the world answered no verification');
      if (call.json) printAnswer(call, answer.text);
      else {
        call.io.out(`kit: the verification of ${printable(name)}: ${verificationText(v)}`);
        call.io.out(`  on ${printable(v.hash)}`);
        for (const line of verificationFailures(v)) call.io.out(`  ${line}`);
      }
      if (v.pass) return 0;
      throw new CliError('verification_failed', `${name} failed its checks; fix the changes and cut again, or change the checks and verify again`);
    },
  },
  {
    words: ['changeset', 'approve'],
    args: '<name>',
    summary: "sign a changeset's current hash as a person",
    help: 'The world signs the hash with its key (Ed25519; kit world changeset list --json answers the public key). An approval holds for that hash only: a changeset changed outside the world is refused (changeset_hash_changed).',
    flags: [
      { name: 'as', kind: 'string', value: 'WHO', required: true, help: 'who approves (a name or an email)' },
      { name: 'note', kind: 'string', value: 'TEXT', help: 'a note kept with the approval' },
    ],
    arity: [1, 1],
    async run(t, call) {
      const name = changesetName(call.args[0] as string);
      const as = flag(call, 'as');
      if (as === undefined || as.trim() === '') throw new UsageError('kit world changeset approve needs --as <who>: the person approving');
      const note = flag(call, 'note');
      const answer = await hinted(name, () => requestJson<WireApproval & { signature?: unknown }>(api(t), 'POST', `/changesets/${segment(name)}/approve`, { json: { as, ...(note !== undefined ? { note } : {}) } }));
      if (call.json) return printAnswer(call, answer.text);
      const a = answer.value;
      call.io.out(`kit: approved ${printable(name)} as ${printable(a?.as)}: signed ${printable(a?.hash)} with key ${printable(a?.keyId)} at ${printable(a?.at)}`);
      return 0;
    },
  },
  {
    words: ['changeset', 'push'],
    args: '<name>',
    summary: "push a changeset to this world's origin (every unpushed one goes, oldest first), or to another world with --to",
    help: [
      'Without --to it is kit world origin push: the origin takes every changeset not pushed yet, oldest',
      'first, as each applies on the one before. With --to, this one changeset is sent to the world at',
      'URL, opened with its token; that world appends it if its base is current there, else refuses with',
      'the drift (base_not_current). A push to --to is not recorded in this world.',
      '',
      TOKEN_HELP,
    ].join('\n'),
    flags: [
      { name: 'to', kind: 'string', value: 'URL', help: "the world to push to (its URL as kit world serve prints it); default this world's origin" },
      { name: 'to-token-env', kind: 'string', value: 'VAR', help: 'the token of the world --to names is the value of the environment variable VAR' },
      { name: 'stdin', kind: 'boolean', help: "read that world's token from standard input instead" },
    ],
    arity: [1, 1],
    async run(t, call) {
      const name = changesetName(call.args[0] as string);
      const to = flag(call, 'to');
      if (to === undefined) {
        if (flag(call, 'to-token-env') !== undefined || call.flags['stdin'] === true) throw new UsageError("--to-token-env and --stdin give the token of the world --to names; the origin's is the world's own (kit world origin set)");
        const current = await hinted(name, () => requestJson<unknown>(api(t), 'GET', `/changesets/${segment(name)}`));
        const shown = changesetOf(current.value);
        if (shown['cut'] === false) {
          throw new CliError('not_cut_here', `${name} landed here from ${printable(shown.from)}: only the changesets cut in this world go to its origin; --to <url> sends it to a world by URL`);
        }
        if (isObject(shown.pushed)) {
          if (call.json) return printAnswer(call, current.text);
          call.io.out(`kit: ${printable(name)} was pushed to ${printable(shown.pushed.to)} at ${printable(shown.pushed.at)} already`);
          return 0;
        }
        return pushToOrigin(t, call, name);
      }
      const target = otherWorld(to, '--to');
      const token = await tokenFrom(call, 'to-token-env', 'kit world changeset push --to');
      const source = await hinted(name, () => requestJson<unknown>(api(t), 'GET', `/changesets/${segment(name)}`));
      changesetOf(source.value);
      let answer: { value: Record<string, unknown>; text: string };
      try {
        // The changeset as this world answered it: its hash is checked there, so it goes unchanged.
        answer = await requestJson(
          { base: target.worldApi, token },
          'POST',
          '/push',
          { body: source.text, contentType: 'application/json', timeoutMs: LONG_TIMEOUT_MS },
        );
      } catch (e) {
        if (!(e instanceof CliError)) throw e;
        const refused = withHint(e, name, target.name);
        // base_not_current says who refused; any other refusal is that world's, and says so.
        throw refused.code === 'base_not_current' ? refused : new CliError(refused.code, `${target.name} refused ${name}: ${refused.message}`, refused.extra);
      }
      if (call.json) return printAnswer(call, answer.text);
      printPushed(call, target.name, isObject(answer.value) ? answer.value : {});
      return 0;
    },
  },
  {
    words: ['changeset', 'deploy'],
    args: '[name]',
    summary: "perform a changeset's landed changes on the twins' roots (the real vendor accounts); every changeset's without <name>",
    help: [
      'Each landed change is sent to the root of its twin, oldest first, with the credential sealed for it;',
      'its receipt maps the twin\'s ids to the real ones. A change the vendor refuses stops the deploy',
      '(deploy_failed, with the receipts so far); a retry performs only what is left. The world takes only',
      'a changeset verified on its current hash (changeset_not_verified, verification_failed).',
      '',
      'This changes real accounts: without --confirm nothing is sent, and kit prints what would be',
      'performed and exits 1 (confirm_required).',
    ].join('\n'),
    flags: [{ name: 'confirm', kind: 'boolean', help: 'perform the changes (without it kit shows what it would perform)' }],
    arity: [0, 1],
    async run(t, call) {
      const name = call.args[0] === undefined ? null : changesetName(call.args[0]);
      if (call.flags['confirm'] !== true) {
        const pending = name !== null ? [changesetOf((await hinted(name, () => requestJson<unknown>(api(t), 'GET', `/changesets/${segment(name)}`))).value)] : await undeployed(t);
        const plan = planLines(pending);
        if (plan.length === 0) {
          if (!call.json) call.io.out(name === null ? `kit: nothing to deploy: ${t.name} has no changes left to perform` : `kit: nothing to deploy: every change of ${printable(name)} is deployed`);
          return 0;
        }
        if (!call.json) {
          call.io.out('kit world changeset deploy would perform on the real vendor accounts (the twins\' roots):');
          for (const line of plan) call.io.out(line);
        }
        throw new CliError('confirm_required', `nothing deployed: this changes real accounts; run again with --confirm to perform ${name === null ? 'these' : printable(name)}`);
      }
      const path = name === null ? '/deploy' : `/deploy/${segment(name)}`;
      let answer: { value: Record<string, unknown>; text: string };
      try {
        answer = await requestJson(api(t), 'POST', path, { timeoutMs: LONG_TIMEOUT_MS });
      } catch (e) {
        if (!(e instanceof CliError)) throw e;
        // A root that answered an error: what was performed before it is real, and printed.
        const receipts = objectsOf<WireReceipt>(e.extra.details?.['receipts']);
        if (!call.json && receipts.length > 0) {
          call.io.out(`kit: the deploy of ${name === null ? 'the changesets' : printable(name)} stopped; the receipts so far:`);
          for (const line of receiptLines(receipts)) call.io.out(line);
        }
        throw withHint(e, name);
      }
      if (call.json) return printAnswer(call, answer.text);
      const results = name === null ? objectsOf<Record<string, unknown>>(answer.value?.['deployed']) : [answer.value];
      if (results.length === 0) call.io.out(`kit: nothing to deploy: ${t.name} has no changes left to perform`);
      for (const result of results) printDeployed(call, result);
      return 0;
    },
  },
  {
    words: ['origin'],
    args: '',
    summary: 'the world this one pushes to and pulls from, and where they last matched',
    arity: [0, 0],
    run: showOrigin,
  },
  {
    words: ['origin', 'show'],
    args: '',
    summary: 'the same as kit world origin',
    arity: [0, 0],
    run: showOrigin,
  },
  {
    words: ['origin', 'set'],
    args: '<url>',
    summary: 'name the world this one pushes to and pulls from, and bring its history in (an empty world only)',
    help: [
      '<url> is the origin world\'s URL as its kit world serve prints it (https://<host>/<org>/<world>).',
      'This world must be empty (origin_needs_empty_world): it starts as a copy of the origin. An origin',
      'that does not answer is origin_unreachable; one that refuses the token, origin_refused.',
      '',
      TOKEN_HELP,
    ].join('\n'),
    flags: [
      { name: 'token-env', kind: 'string', value: 'VAR', help: "the origin's token is the value of the environment variable VAR" },
      { name: 'stdin', kind: 'boolean', help: "read the origin's token from standard input instead" },
    ],
    arity: [1, 1],
    async run(t, call) {
      const given = call.args[0] as string;
      // Either form of a world URL names the same world; the world is sent the one its origin serves twins at.
      let url = given;
      try {
        url = worldUrls(given).worldUrl;
      } catch {
        // Not a world URL as kit reads one: the world says why (invalid_origin).
      }
      const token = await tokenFrom(call, 'token-env', 'kit world origin set');
      const answer = await requestJson<{ origin?: unknown; brought?: unknown }>(api(t), 'PUT', '/origin', { json: { url, token }, timeoutMs: LONG_TIMEOUT_MS });
      if (call.json) return printAnswer(call, answer.text);
      const origin = isObject(answer.value?.origin) ? answer.value.origin : {};
      call.io.out(`kit: the origin of ${t.name} is ${printable(origin['url'] ?? url)}`);
      const brought = entriesPerTwin(answer.value?.brought);
      call.io.out(brought === null ? '  brought nothing: the origin has no history yet' : `  brought ${brought}`);
      return 0;
    },
  },
  {
    words: ['origin', 'pull'],
    args: '',
    summary: "bring the origin's new changes here; conflicts are listed and nothing is written until each is chosen",
    help: [
      'This world moves onto the origin; its own changes since they last matched are kept on top, and its',
      'changesets not pushed yet are rebased (their hash changes: verify and approve them again). A',
      'record field both changed is a conflict, named <twin>/<type>/<id>#<field>: the pull writes',
      'nothing (pull_conflicts) until each is resolved, ours (this world\'s) or theirs (the origin\'s).',
    ].join('\n'),
    flags: [
      { name: 'take', kind: 'string', value: 'ours|theirs', help: 'resolve every conflict --resolve does not name this way' },
      { name: 'resolve', kind: 'list', value: 'KEY=ours|theirs', help: 'resolve the conflict KEY; repeat for more' },
    ],
    arity: [0, 0],
    async run(t, call) {
      const take = flag(call, 'take');
      if (take !== undefined && take !== 'ours' && take !== 'theirs') throw new UsageError(`--take is ours or theirs, got "${printable(take)}"`);
      const resolve = resolutions(call);
      const body = { ...(Object.keys(resolve).length > 0 ? { resolve } : {}), ...(take !== undefined ? { take } : {}) };
      let answer: { value: Record<string, unknown>; text: string };
      try {
        answer = await requestJson(api(t), 'POST', '/origin/pull', { ...(Object.keys(body).length > 0 ? { json: body } : {}), timeoutMs: LONG_TIMEOUT_MS });
      } catch (e) {
        if (!(e instanceof CliError)) throw e;
        const conflicts = e.code === 'pull_conflicts' ? objectsOf<Record<string, unknown>>(e.extra.details?.['conflicts']) : [];
        if (conflicts.length > 0 && !call.json) {
          call.io.out(`kit: ${plural(conflicts.length, 'conflict')} with the origin; nothing was written:`);
          for (const line of conflictLines(conflicts)) call.io.out(`  ${line}`);
        }
        throw withHint(e, null);
      }
      if (call.json) return printAnswer(call, answer.text);
      const v = answer.value ?? {};
      const pulled = entriesPerTwin(v['pulled']);
      call.io.out(pulled === null ? `kit: ${t.name} is up to date with its origin` : `kit: pulled from the origin: ${pulled}`);
      if (v['merged'] === true) call.io.out("  this world's own changes since are kept on top (merged)");
      const rebased = Array.isArray(v['rebased']) ? (v['rebased'] as unknown[]).map((n) => printable(n)) : [];
      if (rebased.length > 0) call.io.out(`  rebased onto the origin: ${rebased.join(', ')} (their hash changed: verify and approve them again)`);
      return 0;
    },
  },
  {
    words: ['origin', 'push'],
    args: '',
    summary: 'push every changeset not pushed yet to the origin, oldest first',
    help: 'The origin appends each if its base is current there. A refusal (base_not_current: the origin moved; kit world origin pull first) stops the push; what was pushed before it stays pushed, and is printed.',
    arity: [0, 0],
    run: (t, call) => pushToOrigin(t, call, null),
  },
];

/** How many changesets the plan of a deploy of every one reads whole; the rest are named. */
const PLAN_CHANGESETS = 20;

/**
 * The changesets a deploy of every one would perform, oldest first (as it does), read whole: the
 * list answers rows without their changes.
 */
async function undeployed(t: WorldTarget): Promise<WireChangeset[]> {
  const rows = objectsOf<WireChangeset>((await requestJson<{ changesets?: unknown }>(api(t), 'GET', '/changesets')).value?.changesets);
  const pending = rows.filter((r) => r.deployed !== 'all' && typeof r.name === 'string').reverse();
  const whole: WireChangeset[] = [];
  for (const row of pending.slice(0, PLAN_CHANGESETS)) {
    whole.push(changesetOf((await requestJson<unknown>(api(t), 'GET', `/changesets/${segment(row.name as string)}`)).value));
  }
  // Past the first ones, a row says enough: its name and how many changes are left.
  for (const row of pending.slice(PLAN_CHANGESETS)) {
    const states = isObject(row.states) ? row.states : {};
    const left = (typeof states['landed'] === 'number' ? states['landed'] : 0) + (typeof states['failed'] === 'number' ? states['failed'] : 0);
    whole.push({ ...row, changes: Array.from({ length: left }, () => ({ state: 'landed' })) });
  }
  return whole;
}

async function showOrigin(t: WorldTarget, call: Invocation): Promise<number> {
  const answer = await requestJson<{ origin?: unknown }>(api(t), 'GET', '/origin');
  if (call.json) return printAnswer(call, answer.text);
  const origin = answer.value?.origin;
  if (!isObject(origin)) {
    call.io.out(`${t.name} has no origin: kit world origin set <url> --token-env VAR names one`);
    return 0;
  }
  const kind = origin['kind'] === 'parent' ? `the world it was branched from${typeof origin['world'] === 'string' ? `, ${printable(origin['world'])}` : ''}` : 'a world by URL';
  for (const line of keyValues([['origin', origin['url']], ['kind', kind], ['since', origin['since']]])) call.io.out(line);
  const synced = isObject(origin['synced']) ? Object.entries(origin['synced']) : [];
  if (synced.length > 0) {
    call.io.out('');
    call.io.out('Where each twin last matched the origin (positions here and there):');
    const rows = synced.map(([twin, s]) => [twin, isObject(s) ? s['ours'] : '-', isObject(s) ? s['theirs'] : '-']);
    for (const line of table(['twin', 'ours', 'theirs'], rows)) call.io.out(`  ${line}`);
  }
  return 0;
}

/** `POST /origin/push`: what it pushed, or the origin's refusal after what it pushed before it. `name` is the changeset `changeset push` was given. */
async function pushToOrigin(t: WorldTarget, call: Invocation, name: string | null): Promise<number> {
  let answer: { value: { pushed?: unknown }; text: string };
  try {
    answer = await requestJson(api(t), 'POST', '/origin/push', { timeoutMs: LONG_TIMEOUT_MS });
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    const before = objectsOf<Record<string, unknown>>(e.extra.details?.['pushed']);
    if (!call.json) for (const item of before) printPushed(call, 'the origin', item);
    throw withHint(e, name, 'the origin');
  }
  if (call.json) return printAnswer(call, answer.text);
  const pushed = objectsOf<Record<string, unknown>>(answer.value?.pushed);
  if (pushed.length === 0) call.io.out(`kit: nothing to push: every changeset of ${t.name} is pushed (kit world changeset cut cuts new changes)`);
  for (const item of pushed) printPushed(call, 'the origin', item);
  const names = pushed.map((item) => (isObject(item['changeset']) ? item['changeset']['name'] : item['changeset']));
  if (name !== null && !names.includes(name)) throw new CliError('not_pushed', `the origin push did not take ${name}; kit world changeset show ${name} says where it came from`);
  return 0;
}
