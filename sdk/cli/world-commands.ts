/**
 * `kit world <command>`: every world endpoint without curl. Each command finds its world
 * (sdk/cli/targets.ts), calls `{world_api}/…` (sdk/cli/client.ts) and prints a table for a
 * person or, with `--json`, the world's JSON as answered. `serve` and `attach` live in
 * serve.ts and attach.ts; main.ts dispatches.
 */
import { readFile, stat } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { UsageError } from './args.js';
import { CHANGESET_COMMANDS } from './changeset-commands.js';
import { CliError, request, requestJson, segment } from './client.js';
import type { Endpoint } from './client.js';
import { flag, printAnswer, wholeFlag } from './commands.js';
import type { ClientDeps, Command, CommandGroup, Invocation } from './commands.js';
import { bytes, describeCause, describeWrites, keyValues, printable, table } from './format.js';
import type { WireEntry } from './format.js';
import { KEY_COMMANDS } from './key-commands.js';
import { ROOT_COMMANDS } from './root-commands.js';
import { findWorld, parseWorldName } from './targets.js';
import type { WorldTarget } from './targets.js';

interface ClockAnswer {
  at: string;
  frozen: boolean;
}
interface TimelineItem {
  twin: string;
  position: number;
  entry: WireEntry;
}
interface TimelineAnswer {
  entries: TimelineItem[];
  next: string | null;
}
interface MapAnswer {
  twins: { twin: string; position: number; mirror: string | null; root: unknown; resources: { type: string; count: number }[] }[];
}
interface BranchRow {
  name: string;
  from: string;
  at: string;
  createdAt: string;
  expiresAt: string | null;
}

/** The largest document `scenario put` / `check put` sends: the world refuses a body over 4 MB anyway. */
const MAX_UPLOAD_BYTES = 4 * 1024 * 1024;

const api = (t: WorldTarget): Endpoint => ({ base: t.worldApi, token: t.token });

function printClock(call: Invocation, answer: { value: ClockAnswer; text: string }): number {
  if (call.json) return printAnswer(call, answer.text);
  const { at, frozen } = answer.value;
  for (const line of keyValues([['at', at], ['frozen', frozen ? 'yes (set: every twin stamps from it)' : 'no (the wall clock)']])) call.io.out(line);
  return 0;
}

/** A file's bytes (or standard input for none or `-`), at most 4 MB. */
async function readUpload(call: Invocation, file: string | undefined): Promise<{ body: Uint8Array; name: string | null }> {
  if (file === undefined || file === '-') {
    const body = await call.deps.readStdin(MAX_UPLOAD_BYTES);
    if (body.byteLength > MAX_UPLOAD_BYTES) throw new CliError('body_too_large', 'standard input holds more than 4 MiB; the world takes at most 4 MiB');
    return { body, name: null };
  }
  const path = resolve(call.deps.cwd, file);
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new CliError('unreadable_file', `${path} is not a regular file`);
    if (info.size > MAX_UPLOAD_BYTES) throw new CliError('body_too_large', `${path} is ${bytes(info.size)}; the world takes at most 4 MiB`);
    return { body: await readFile(path), name: path };
  } catch (e) {
    if (e instanceof CliError) throw e;
    throw new CliError('unreadable_file', `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/** A scenario's content type: by the file's extension, else JSON when it looks like JSON (YAML reads JSON too, but the world keeps the format). */
function scenarioType(name: string | null, body: Uint8Array): string {
  const ext = name === null ? '' : extname(name).toLowerCase();
  if (ext === '.json') return 'application/json';
  if (ext === '.yaml' || ext === '.yml') return 'application/yaml';
  const first = new TextDecoder().decode(body.subarray(0, 256)).trimStart()[0];
  return first === '{' ? 'application/json' : 'application/yaml';
}

/** Writes an answer's bytes to standard output as they arrive; answers how many. */
async function pipeToStdout(call: Invocation, response: Response): Promise<number> {
  let written = 0;
  let last = 0;
  if (response.body === null) return 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    await call.deps.writeStdout(chunk);
    written += chunk.byteLength;
    last = chunk[chunk.byteLength - 1] ?? last;
  }
  // A document without a final newline would run into the shell's prompt.
  if (call.deps.stdoutIsTTY && written > 0 && last !== 10) await call.deps.writeStdout(new Uint8Array([10]));
  return written;
}

function timelineRows(items: readonly TimelineItem[]): unknown[][] {
  return items.map((i) => [i.entry.occurredAt, i.twin, i.position, describeCause(i.entry), describeWrites(i.entry)]);
}
const TIMELINE_HEADERS = ['at', 'twin', 'pos', 'cause', 'writes'];

function sleep(ms: number, stopped: Promise<unknown>): Promise<void> {
  return new Promise((done) => {
    const timer = setTimeout(done, ms);
    void stopped.then(() => {
      clearTimeout(timer);
      done();
    });
  });
}

/** The interval of `--follow`, in milliseconds. */
function intervalOf(call: Invocation): number {
  const raw = flag(call, 'interval');
  if (raw === undefined) return 1000;
  if (!/^\d{1,6}(\.\d{1,3})?$/.test(raw) || Number(raw) < 0.05) throw new UsageError(`--interval is a number of seconds of at least 0.05, got "${raw}"`);
  return Math.round(Number(raw) * 1000);
}

/**
 * `timeline --follow`: the newest entries, then every new one as it lands, until Ctrl-C. An
 * entry is new when its position is past the newest one seen of its twin (a twin's positions
 * only grow); the map says where each twin stood at the start, so older entries never show up
 * as new when the window of a poll reaches past the first page.
 */
async function followTimeline(target: WorldTarget, call: Invocation, query: { twin?: string; trace?: string }, limit: number): Promise<number> {
  const endpoint = api(target);
  const interval = intervalOf(call);
  let stop = false;
  const stopped = call.deps.untilStopped().then(() => {
    stop = true;
  });
  const seen = new Map<string, number>();
  const map = (await requestJson<MapAnswer>(endpoint, 'GET', '/map')).value;
  for (const t of map.twins) seen.set(t.twin, t.position);
  const twinWidth = Math.max(4, ...map.twins.map((t) => printable(t.twin).length));
  const print = (items: readonly TimelineItem[]): void => {
    for (const item of items) {
      seen.set(item.twin, Math.max(seen.get(item.twin) ?? 0, item.position));
      if (call.json) call.io.out(JSON.stringify(item));
      else {
        const [at, twin, pos, cause, writes] = timelineRows([item])[0] as string[];
        call.io.out(`${printable(at).padEnd(24)}  ${printable(twin).padEnd(twinWidth)}  ${String(pos).padEnd(6)}  ${printable(cause).padEnd(32)}  ${printable(writes)}`);
      }
    }
  };
  if (!call.json) call.io.out(`${'AT'.padEnd(24)}  ${'TWIN'.padEnd(twinWidth)}  ${'POS'.padEnd(6)}  ${'CAUSE'.padEnd(32)}  WRITES`);
  const first = (await requestJson<TimelineAnswer>(endpoint, 'GET', '/timeline', { query: { ...query, limit } })).value;
  print([...first.entries].reverse());
  while (!stop) {
    await sleep(interval, stopped);
    if (stop) break;
    const fresh: TimelineItem[] = [];
    let before: string | undefined;
    // Pages until one reaches an entry already seen: a burst between two polls is not lost.
    for (let page = 0; page < 100; page++) {
      const answer = (await requestJson<TimelineAnswer>(endpoint, 'GET', '/timeline', { query: { ...query, limit: 100, before } })).value;
      const unseen = answer.entries.filter((e) => e.position > (seen.get(e.twin) ?? 0));
      fresh.push(...unseen);
      if (unseen.length < answer.entries.length || answer.next === null) break;
      before = answer.next;
    }
    print(fresh.reverse());
  }
  return 0;
}

const commands: Command<WorldTarget>[] = [
  {
    words: ['clock'],
    args: '',
    summary: "show the world's clock",
    arity: [0, 0],
    run: async (t, call) => printClock(call, await requestJson<ClockAnswer>(api(t), 'GET', '/clock')),
  },
  {
    words: ['clock', 'set'],
    args: '<instant>',
    summary: 'set the clock at an ISO 8601 instant and freeze it there',
    help: 'The clock never moves back: an instant before the current one (or, unset, before the newest entry) is refused (clock_backward).',
    arity: [1, 1],
    run: async (t, call) => printClock(call, await requestJson<ClockAnswer>(api(t), 'PUT', '/clock', { json: { at: call.args[0] } })),
  },
  {
    words: ['clock', 'advance'],
    args: '<N><unit>',
    summary: 'move a set clock forward by N s, m, h or d',
    help: 'Twins catch up on their next request: timed moves that fell due (a renewal, an expiry) are stamped at the instants they fell due. An unset clock cannot advance (clock_unset): set it first.',
    arity: [1, 1],
    run: async (t, call) => printClock(call, await requestJson<ClockAnswer>(api(t), 'POST', '/clock/advance', { json: { by: call.args[0] } })),
  },
  {
    words: ['branch'],
    args: '',
    summary: "make a branch: a new world from this one's history, cut at an instant",
    help: 'The branch starts with its clock frozen at the instant (now by default) and tokens of its own, printed once. A host makes branches; the single-world server does not (not_found).',
    flags: [
      { name: 'at', kind: 'string', value: 'INSTANT', help: 'cut the history at this ISO 8601 instant (default: now)' },
      { name: 'label', kind: 'string', value: 'L', help: 'name the branch <world>-<L>-<4 hex>' },
      { name: 'ttl', kind: 'string', value: 'S', help: 'remove the branch after S seconds (60 to 2592000)' },
      { name: 'live', kind: 'boolean', help: "keep this world's time instead of freezing the clock (a branch as of now only)" },
    ],
    arity: [0, 0],
    async run(t, call) {
      const body: Record<string, unknown> = {};
      const at = flag(call, 'at');
      if (at !== undefined) body['at'] = at;
      const label = flag(call, 'label');
      if (label !== undefined) body['label'] = label;
      const ttl = wholeFlag(call, 'ttl', 1);
      if (ttl !== undefined) body['ttl'] = ttl;
      if (call.flags['live'] === true) body['live'] = true;
      const answer = await requestJson<{ name: string; token: string; readToken: string; expiresAt: string | null; url?: string; api?: string }>(api(t), 'POST', '/branches', { json: body });
      if (call.json) return printAnswer(call, answer.text);
      const b = answer.value;
      const url = b.url ?? `${t.base}/${b.name}`;
      const apiUrl = b.api ?? `${t.base}/-/${b.name}`;
      call.io.out(`kit: made branch ${printable(b.name)} from ${t.name}`);
      call.io.out('');
      for (const line of keyValues([['world URL', url], ['world API', apiUrl], ['token', b.token], ['read token', b.readToken], ['expires', b.expiresAt ?? 'never']])) call.io.out(`  ${line}`);
      call.io.out('');
      call.io.out('Try:');
      call.io.out(`  kit world clock --world ${printable(url)} --token ${printable(b.token)}`);
      return 0;
    },
  },
  {
    words: ['branches'],
    args: '',
    summary: "list this world's branches",
    arity: [0, 0],
    async run(t, call) {
      const answer = await requestJson<BranchRow[]>(api(t), 'GET', '/branches');
      if (call.json) return printAnswer(call, answer.text);
      if (!Array.isArray(answer.value)) throw new CliError('bad_answer', 'the world answered branches that are not a list');
      if (answer.value.length === 0) {
        call.io.out(`${t.name} has no branches`);
        return 0;
      }
      for (const line of table(['name', 'from', 'at', 'created', 'expires'], answer.value.map((b) => [b.name, b.from, b.at, b.createdAt, b.expiresAt ?? 'never']))) call.io.out(line);
      return 0;
    },
  },
  {
    words: ['rm'],
    args: '<org>/<world>',
    summary: "remove one of this world's branches",
    help: 'A branch that has branches of its own is not removed (world_has_branches): remove those first.',
    arity: [1, 1],
    async run(t, call) {
      const { org, world } = parseWorldName(call.args[0] as string);
      await request(api(t), 'DELETE', `/branches/${segment(org)}/${segment(world)}`);
      if (!call.json) call.io.out(`kit: removed branch ${org}/${world}`);
      return 0;
    },
  },
  {
    words: ['timeline'],
    args: '',
    summary: "the twins' logs merged, oldest at the top (--follow: then new entries until Ctrl-C)",
    help: 'The world answers newest first, a page at a time; the table shows the page oldest at the top. Older pages: --before <the cursor printed under the table>. With --follow and --json, one JSON line per entry.',
    flags: [
      { name: 'twin', kind: 'string', value: 'T', help: 'only the entries of twin T' },
      { name: 'trace', kind: 'string', value: 'ID', help: 'only the entries of the W3C trace ID (32 hex digits)' },
      { name: 'limit', kind: 'string', value: 'N', help: 'at most N entries (with --follow, the first page; default 20)' },
      { name: 'before', kind: 'string', value: 'CURSOR', help: 'the page before CURSOR (the next page of older entries)' },
      { name: 'follow', kind: 'boolean', help: 'then poll and print new entries as they land, until Ctrl-C' },
      { name: 'interval', kind: 'string', value: 'S', help: 'with --follow, poll every S seconds (default 1)' },
    ],
    arity: [0, 0],
    async run(t, call) {
      const query: { twin?: string; trace?: string } = {};
      const twin = flag(call, 'twin');
      if (twin !== undefined) query.twin = twin;
      const trace = flag(call, 'trace');
      if (trace !== undefined) query.trace = trace;
      const limit = wholeFlag(call, 'limit', 1);
      if (call.flags['follow'] === true) {
        if (flag(call, 'before') !== undefined) throw new UsageError('--follow shows the newest entries: it takes no --before');
        return followTimeline(t, call, query, limit ?? 20);
      }
      if (flag(call, 'interval') !== undefined) throw new UsageError('--interval goes with --follow');
      const answer = await requestJson<TimelineAnswer>(api(t), 'GET', '/timeline', { query: { ...query, limit, before: flag(call, 'before') } });
      if (call.json) return printAnswer(call, answer.text);
      const { entries, next } = answer.value;
      if (entries.length === 0) call.io.out('no entries');
      else for (const line of table(TIMELINE_HEADERS, timelineRows([...entries].reverse()))) call.io.out(line);
      if (next !== null) call.io.err(`kit: older entries: --before ${printable(next)}`);
      return 0;
    },
  },
  {
    words: ['log'],
    args: '<twin>',
    summary: "a twin's log, oldest first",
    flags: [
      { name: 'after', kind: 'string', value: 'P', help: 'the entries after position P' },
      { name: 'limit', kind: 'string', value: 'N', help: 'at most N entries' },
    ],
    arity: [1, 1],
    async run(t, call) {
      const twin = call.args[0] as string;
      const answer = await requestJson<{ twin: string; entries: WireEntry[]; next: number | null }>(api(t), 'GET', `/log/${segment(twin)}`, {
        query: { after: wholeFlag(call, 'after', 0), limit: wholeFlag(call, 'limit', 1) },
      });
      if (call.json) return printAnswer(call, answer.text);
      const { entries, next } = answer.value;
      if (entries.length === 0) call.io.out(`no entries in the log of ${printable(twin)}${flag(call, 'after') !== undefined ? ` after position ${flag(call, 'after') as string}` : ''}`);
      else for (const line of table(['pos', 'at', 'cause', 'writes'], entries.map((e) => [e.position, e.occurredAt, describeCause(e), describeWrites(e)]))) call.io.out(line);
      if (next !== null && next !== undefined) call.io.err(`kit: more entries: --after ${printable(next)}`);
      return 0;
    },
  },
  {
    words: ['map'],
    args: '',
    summary: 'each twin: its position and how many records of each type it holds',
    arity: [0, 0],
    async run(t, call) {
      const answer = await requestJson<MapAnswer>(api(t), 'GET', '/map');
      if (call.json) return printAnswer(call, answer.text);
      const rows = answer.value.twins.map((w) => [
        w.twin,
        w.position,
        w.resources.length === 0 ? '-' : w.resources.map((r) => `${r.type} ${r.count}`).join(', '),
        w.mirror ?? '-',
      ]);
      for (const line of table(['twin', 'position', 'resources', 'mirror'], rows)) call.io.out(line);
      return 0;
    },
  },
  {
    words: ['diff'],
    args: '',
    summary: "the world's own changes since its base (a branch: since it was cut)",
    flags: [
      { name: 'after', kind: 'string', value: 'CURSOR', help: 'the changes after CURSOR (the next page)' },
      { name: 'limit', kind: 'string', value: 'N', help: 'at most N changes' },
    ],
    arity: [0, 0],
    async run(t, call) {
      const answer = await requestJson<{ base: { id: string | null; at: string | null }; changes: TimelineItem[]; next?: string | null }>(api(t), 'GET', '/diff', {
        query: { after: flag(call, 'after'), limit: wholeFlag(call, 'limit', 1) },
      });
      if (call.json) return printAnswer(call, answer.text);
      const { base, changes, next } = answer.value;
      call.io.out(base.id === null ? 'base  none (every entry is the world\'s own)' : `base  ${printable(base.id)} at ${printable(base.at)}`);
      call.io.out('');
      if (changes.length === 0) call.io.out('no changes');
      else for (const line of table(['twin', 'pos', 'at', 'cause', 'writes'], changes.map((c) => [c.twin, c.entry.position, c.entry.occurredAt, describeCause(c.entry), describeWrites(c.entry)]))) call.io.out(line);
      if (next !== null && next !== undefined) call.io.err(`kit: more changes: --after ${printable(next)}`);
      return 0;
    },
  },
  {
    words: ['history'],
    args: '',
    summary: 'the history cut at an instant: where each twin stood then',
    flags: [{ name: 'at', kind: 'string', value: 'INSTANT', required: true, help: 'the ISO 8601 instant' }],
    arity: [0, 0],
    async run(t, call) {
      const at = flag(call, 'at');
      if (at === undefined) throw new UsageError('kit world history needs --at <instant>');
      const answer = await requestJson<{ views: Record<string, { view: string; position: number }> }>(api(t), 'GET', '/history', { query: { at } });
      if (call.json) return printAnswer(call, answer.text);
      const rows = Object.entries(answer.value.views).map(([twin, v]) => [twin, v.position, v.view]);
      for (const line of table(['twin', 'position', 'view'], rows)) call.io.out(line);
      return 0;
    },
  },
  {
    words: ['checkpoint'],
    args: '<twin>',
    summary: "a twin's state at a position (latest by default), as bytes on standard output",
    help: 'Redirect it to a file: kit world checkpoint stripe > stripe.json. The byte count goes to standard error at the end.',
    flags: [{ name: 'at', kind: 'string', value: 'P', help: 'the state at position P' }],
    arity: [1, 1],
    async run(t, call) {
      const twin = call.args[0] as string;
      const at = wholeFlag(call, 'at', 0);
      // A checkpoint is up to 24 MB: longer than a small answer may take.
      const response = await request(api(t), 'GET', `/checkpoint/${segment(twin)}`, { query: { at }, timeoutMs: 10 * 60_000 });
      const written = await pipeToStdout(call, response);
      call.io.err(`kit: wrote ${written} byte${written === 1 ? '' : 's'}${written >= 1024 ? ` (${bytes(written)})` : ''}: the checkpoint of ${printable(twin)}${at !== undefined ? ` at position ${at}` : ''}`);
      return 0;
    },
  },
  {
    words: ['scenario', 'get'],
    args: '<twin>',
    summary: 'the scenario in force on a twin, as it was put',
    arity: [1, 1],
    async run(t, call) {
      const response = await request(api(t), 'GET', `/twins/${segment(call.args[0] as string)}/scenario`);
      await pipeToStdout(call, response);
      return 0;
    },
  },
  {
    words: ['scenario', 'put'],
    args: '<twin> [file]',
    summary: 'put a scenario (YAML or JSON) in force on a twin, from a file or standard input',
    help: 'The world validates the document and keeps the one in force when it is refused; the refusal names the handler and the field. A .json file (or a document that starts with {) is sent as JSON, anything else as YAML. See docs/scenarios.md.',
    arity: [1, 2],
    async run(t, call) {
      const twin = call.args[0] as string;
      const { body, name } = await readUpload(call, call.args[1]);
      const answer = await requestJson<{ twin: string; format: string; handlers: number; updatedAt: string }>(api(t), 'PUT', `/twins/${segment(twin)}/scenario`, {
        body,
        contentType: scenarioType(name, body),
      });
      if (call.json) return printAnswer(call, answer.text);
      const s = answer.value;
      call.io.out(`kit: the scenario of ${printable(s.twin)} is in force: ${s.handlers} handler${s.handlers === 1 ? '' : 's'} (${printable(s.format)}), put at ${printable(s.updatedAt)}`);
      return 0;
    },
  },
  {
    words: ['scenario', 'rm'],
    args: '<twin>',
    summary: "remove a twin's scenario (the twin answers as itself again)",
    arity: [1, 1],
    async run(t, call) {
      const twin = call.args[0] as string;
      await request(api(t), 'DELETE', `/twins/${segment(twin)}/scenario`);
      if (!call.json) call.io.out(`kit: removed the scenario of ${printable(twin)}`);
      return 0;
    },
  },
  {
    words: ['checks'],
    args: '',
    summary: "list the world's checks",
    arity: [0, 0],
    async run(t, call) {
      const answer = await requestJson<{ checks: { name: string; declared: string; updatedAt: string; bytes: number }[] }>(api(t), 'GET', '/checks');
      if (call.json) return printAnswer(call, answer.text);
      if (answer.value.checks.length === 0) {
        call.io.out(`${t.name} has no checks`);
        return 0;
      }
      for (const line of table(['name', 'declares', 'bytes', 'updated'], answer.value.checks.map((c) => [c.name, c.declared, c.bytes, c.updatedAt]))) call.io.out(line);
      return 0;
    },
  },
  {
    words: ['check', 'get'],
    args: '<name>',
    summary: "a check's source",
    arity: [1, 1],
    async run(t, call) {
      const response = await request(api(t), 'GET', `/checks/${segment(call.args[0] as string)}`);
      await pipeToStdout(call, response);
      return 0;
    },
  },
  {
    words: ['check', 'put'],
    args: '<name> [file]',
    summary: 'store a check (JavaScript exporting check = { name, run(entry, tree) }), from a file or standard input',
    help: 'A source that does not load or exports no check is refused (invalid_check) and the check stored under that name, if any, is kept.',
    arity: [1, 2],
    async run(t, call) {
      const name = call.args[0] as string;
      const { body } = await readUpload(call, call.args[1]);
      const answer = await requestJson<{ name: string; declared: string; updatedAt: string }>(api(t), 'PUT', `/checks/${segment(name)}`, { body, contentType: 'text/javascript' });
      if (call.json) return printAnswer(call, answer.text);
      const c = answer.value;
      call.io.out(`kit: stored check ${printable(c.name)} (it declares "${printable(c.declared)}"), at ${printable(c.updatedAt)}`);
      return 0;
    },
  },
  {
    words: ['check', 'rm'],
    args: '<name>',
    summary: 'remove a check',
    arity: [1, 1],
    async run(t, call) {
      const name = call.args[0] as string;
      await request(api(t), 'DELETE', `/checks/${segment(name)}`);
      if (!call.json) call.io.out(`kit: removed check ${printable(name)}`);
      return 0;
    },
  },
  ...KEY_COMMANDS,
  ...ROOT_COMMANDS,
  ...CHANGESET_COMMANDS,
];

export const WORLD_COMMANDS: CommandGroup<WorldTarget> = {
  name: 'world',
  commands,
  flags: [
    { name: 'world', kind: 'string', value: 'URL', help: 'the world: its URL as kit world serve prints it (default $KIT_WORLD)' },
    { name: 'token', kind: 'string', value: 'T', help: "the world's token or read token (default $KIT_WORLD_TOKEN)" },
    { name: 'dir', kind: 'string', value: 'DIR', help: 'else the world served from DIR, by its .kit/token (default: the current directory)' },
  ],
  others: [
    { synopsis: 'kit world serve [dir]', summary: 'serve the world kept in <dir> (kit world serve --help for its flags)' },
    { synopsis: 'kit world attach <world url> -- <command>', summary: "run a command whose SDKs reach the world's twins" },
    { synopsis: 'kit world export [dir] [--twin V] [--out FILE]', summary: "write the twins of the world kept in <dir> as export files, for a host's import" },
  ],
  footer: [
    'The world is found from --world and --token, else KIT_WORLD and KIT_WORLD_TOKEN, else the',
    '.kit/token that kit world serve writes in the directory it serves (--dir, or the current one).',
    'The read token opens the commands that only read. A failure prints one line,',
    'kit: <message> (<code>), and exits 1; bad usage exits 2. See docs/cli.md.',
  ].join('\n'),
  target: (flags, deps: ClientDeps) =>
    findWorld(
      {
        ...(typeof flags['world'] === 'string' ? { world: flags['world'] } : {}),
        ...(typeof flags['token'] === 'string' ? { token: flags['token'] } : {}),
        ...(typeof flags['dir'] === 'string' ? { dir: flags['dir'] } : {}),
      },
      deps,
    ),
};
