/**
 * The frame of the client commands (`kit world clock`, `kit host worlds`, …): a table of
 * commands, each with its words, arguments, flags and help; finding the command an argv
 * names; parsing its flags; and the one way a failure is told (`kit: <message> (<code>)`,
 * exit 1; bad usage: the message and the usage, exit 2).
 */
import { parseArgs, UsageError } from './args.js';
import type { FlagSpec } from './args.js';
import { CliError } from './client.js';
import { printable } from './format.js';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

/** What the client commands need of the process; `processClientDeps` in kit.ts gives the real ones. */
export interface ClientDeps {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Standard input (`kit world scenario put <twin>` without a file), up to `maxBytes` and a byte more (so more is told from enough). */
  readStdin(maxBytes: number): Promise<Uint8Array>;
  /** Bytes to standard output, resolved once written (backpressure), for `checkpoint`. */
  writeStdout(chunk: Uint8Array): Promise<void>;
  stdoutIsTTY: boolean;
  /** Resolves with the signal's name on Ctrl-C (SIGINT) or SIGTERM: `timeline --follow` stops. */
  untilStopped(): Promise<string>;
}

/** One command's parsed invocation. */
export interface Invocation {
  /** Its positional arguments (after the command's words). */
  args: string[];
  flags: Record<string, string | true>;
  /** `list` flags given, each value in the order given (`--header-env A=X --header-env B=Y`). */
  lists: Record<string, string[]>;
  /** `--json` was given. */
  json: boolean;
  io: CliIo;
  deps: ClientDeps;
}

export interface Command<Target> {
  /** The words that name it: `['clock', 'set']`. */
  words: readonly string[];
  /** Its arguments as the usage writes them: `<instant>`. */
  args: string;
  /** One line for the group's help. */
  summary: string;
  /** Paragraphs for its own `--help`, beyond the summary. */
  help?: string;
  /** Its own flags (the group's are added) and their help lines; `required` ones are written without brackets (the command checks them). */
  flags?: readonly (FlagSpec & { help: string; value?: string; required?: boolean })[];
  /** How many positional arguments it takes: [at least, at most]. */
  arity: readonly [number, number];
  /**
   * Group flags its positionals or its own flags stand for, before the target is found (`kit host
   * twin install <host-url> …` names the host as `--url` would; `--stdin` reads the token).
   */
  targetFlags?(call: { args: readonly string[]; flags: Record<string, string | true> }, deps: ClientDeps): Promise<Record<string, string>>;
  run(target: Target, call: Invocation): Promise<number>;
}

export interface CommandGroup<Target> {
  /** `world` or `host`. */
  name: string;
  commands: readonly Command<Target>[];
  /** Flags every command of the group takes, with their help lines. */
  flags: readonly (FlagSpec & { help: string; value?: string })[];
  /** Commands the group names in its help that another module runs (`serve`, `attach`). */
  others?: readonly { synopsis: string; summary: string }[];
  /** Paragraphs after the list of commands. */
  footer: string;
  /** Finds the target (the world, the host) from the flags; throws CliError. */
  target(flags: Record<string, string | true>, deps: ClientDeps): Promise<Target>;
}

const JSON_FLAG = { name: 'json', kind: 'boolean', help: 'print the JSON the server answered, as answered' } as const;
const HELP_FLAG = { name: 'help', kind: 'boolean', short: 'h', help: 'this help' } as const;

function synopsis<T>(group: CommandGroup<T>, c: Command<T>): string {
  return `kit ${group.name} ${c.words.join(' ')}${c.args === '' ? '' : ` ${c.args}`}`;
}

/** A command's synopsis with its own flags: `kit world log <twin> [--after P] [--limit N]`. */
function fullSynopsis<T>(group: CommandGroup<T>, c: Command<T>): string {
  const own = (c.flags ?? []).map((f) => {
    const text = f.kind !== 'boolean' ? `--${f.name} ${f.value ?? 'X'}` : `--${f.name}`;
    // A list flag repeats: `[--header-env NAME=VAR]...`.
    const repeats = f.kind === 'list' ? '...' : '';
    return f.required === true ? ` ${text}${repeats}` : ` [${text}]${repeats}`;
  }).join('');
  return `${synopsis(group, c)}${own}`;
}

/** Rows of `synopsis  summary`; a long synopsis gets its summary on the line below. */
export function commandList(rows: readonly { synopsis: string; summary: string }[]): string[] {
  const WIDE = 44;
  const width = Math.max(...rows.map((r) => r.synopsis.length).filter((n) => n <= WIDE));
  return rows.flatMap((r) =>
    r.synopsis.length <= WIDE ? [`  ${r.synopsis.padEnd(width)}  ${r.summary}`] : [`  ${r.synopsis}`, `  ${''.padEnd(width)}  ${r.summary}`],
  );
}

function flagLines(flags: readonly (FlagSpec & { help: string; value?: string })[]): string[] {
  const names = flags.map((f) => `${f.short !== undefined ? `-${f.short}, ` : ''}--${f.name}${f.kind !== 'boolean' ? ` ${f.value ?? 'X'}` : ''}`);
  const width = Math.max(...names.map((n) => n.length));
  return flags.map((f, i) => `  ${(names[i] as string).padEnd(width)}  ${f.help}`);
}

/** The group's help: every command with one line, then the flags they all take. */
export function groupUsage<T>(group: CommandGroup<T>): string {
  const rows = commandRows(group);
  return [
    `Usage: kit ${group.name} <command> [args] [flags]`,
    '',
    'Commands:',
    ...commandList(rows),
    '',
    'Flags every command takes:',
    ...flagLines([...group.flags, JSON_FLAG, HELP_FLAG]),
    '',
    group.footer,
  ].join('\n');
}

/** One command's help. */
export function commandUsage<T>(group: CommandGroup<T>, c: Command<T>): string {
  const own = c.flags ?? [];
  return [
    `Usage: ${fullSynopsis(group, c)} [flags]`,
    '',
    `${c.summary.charAt(0).toUpperCase()}${c.summary.slice(1)}.`,
    ...(c.help !== undefined ? ['', c.help] : []),
    '',
    'Flags:',
    ...flagLines([...own, ...group.flags, JSON_FLAG, HELP_FLAG]),
  ].join('\n');
}

/** The command `argv` names (the longest run of words that matches), or null. */
function findCommand<T>(group: CommandGroup<T>, argv: readonly string[]): Command<T> | null {
  let found: Command<T> | null = null;
  for (const c of group.commands) {
    if (c.words.every((w, i) => argv[i] === w) && (found === null || c.words.length > found.words.length)) found = c;
  }
  return found;
}

/** The one line a failure prints: `kit: <message> (<code>)`. */
export function failureLine(e: CliError): string {
  return `kit: ${printable(e.message)} (${printable(e.code)})`;
}

/**
 * Runs the command of `group` that `argv` names. Exit codes: 0 done, 1 failed (one line on
 * stderr), 2 bad usage (a line and the usage).
 */
export async function runGroup<T>(group: CommandGroup<T>, argv: readonly string[], io: CliIo, deps: ClientDeps): Promise<number> {
  const usage = (message: string, text: string): number => {
    io.err(`kit: ${message}`);
    io.err('');
    io.err(text);
    return 2;
  };
  const [first] = argv;
  if (first === undefined) return usage(`kit ${group.name} needs a command`, groupUsage(group));
  if (first === '--help' || first === '-h' || first === 'help') {
    io.out(groupUsage(group));
    return 0;
  }
  const command = findCommand(group, argv);
  if (command === null) {
    const family = group.commands.filter((c) => c.words[0] === first);
    if (family.length > 0) {
      const named = argv[1] === undefined || argv[1].startsWith('-') ? '' : ` ${argv[1]}`;
      const choices = `kit ${group.name} ${first} ${family.map((c) => c.words.slice(1).join(' ')).join('|')}`;
      return usage(named === '' ? `name a command: ${choices}` : `unknown command ${group.name} ${first}${named}; the commands are ${choices}`, groupUsage(group));
    }
    return usage(`unknown command ${group.name} ${first}`, groupUsage(group));
  }
  let parsed;
  try {
    parsed = parseArgs(argv.slice(command.words.length), [...(command.flags ?? []), ...group.flags, JSON_FLAG, HELP_FLAG]);
  } catch (e) {
    if (e instanceof UsageError) return usage(e.message, commandUsage(group, command));
    throw e;
  }
  if (parsed.flags['help'] === true) {
    io.out(commandUsage(group, command));
    return 0;
  }
  const [least, most] = command.arity;
  const n = parsed.positionals.length;
  if (n < least || n > most) {
    const name = `kit ${group.name} ${command.words.join(' ')}`;
    const message = n < least ? `${name} needs ${command.args}` : most === 0 ? `${name} takes no argument, got ${parsed.positionals.join(' ')}` : `${name} takes ${command.args}, got ${parsed.positionals.join(' ')}`;
    return usage(message, commandUsage(group, command));
  }
  try {
    const given = command.targetFlags === undefined ? {} : await command.targetFlags({ args: parsed.positionals, flags: parsed.flags }, deps);
    for (const name of Object.keys(given)) {
      if (parsed.flags[name] !== undefined) throw new UsageError(`--${name} and ${name === 'url' ? 'the host URL argument' : '--stdin'} both give the ${name}: give one`);
    }
    const target = await group.target({ ...parsed.flags, ...given }, deps);
    return await command.run(target, { args: parsed.positionals, flags: parsed.flags, lists: parsed.lists, json: parsed.flags['json'] === true, io, deps });
  } catch (e) {
    if (e instanceof UsageError) return usage(e.message, commandUsage(group, command));
    if (e instanceof CliError) {
      io.err(failureLine(e));
      return 1;
    }
    throw e;
  }
}

/** A string flag's value, or undefined. */
export function flag(call: Invocation, name: string): string | undefined {
  const v = call.flags[name];
  return typeof v === 'string' ? v : undefined;
}

/** A whole-number flag (`--limit 20`), or undefined; a usage error when it is not one. */
export function wholeFlag(call: Invocation, name: string, min: number): number | undefined {
  const v = flag(call, name);
  if (v === undefined) return undefined;
  if (!/^\d{1,15}$/.test(v) || Number(v) < min) throw new UsageError(`--${name} must be a whole number of at least ${min}, got "${v}"`);
  return Number(v);
}

/** Prints the body the server answered, as answered (`--json`); an empty body prints nothing. */
export function printAnswer(call: Invocation, text: string): number {
  if (text !== '') call.io.out(text.replace(/\n$/, ''));
  return 0;
}

/** The group's commands as `[synopsis, summary]` rows, for `kit --help`. */
export function commandRows<T>(group: CommandGroup<T>): { synopsis: string; summary: string }[] {
  return [...(group.others ?? []), ...group.commands.map((c) => ({ synopsis: fullSynopsis(group, c), summary: c.summary }))];
}

/** The process's own standard streams, environment and directory; `untilStopped` as the CLI has it. */
export function processClientDeps(untilStopped: () => Promise<string>): ClientDeps {
  return {
    env: process.env,
    cwd: process.cwd(),
    async readStdin(maxBytes) {
      if (process.stdin.isTTY === true) process.stderr.write('kit: reading standard input; end it with Ctrl-D (or name a file)\n');
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of process.stdin) {
        chunks.push(chunk as Buffer);
        size += (chunk as Buffer).byteLength;
        if (size > maxBytes) break;
      }
      return Buffer.concat(chunks);
    },
    writeStdout(chunk) {
      return new Promise((done, fail) => {
        process.stdout.write(chunk, (e) => (e ? fail(e) : done()));
      });
    },
    stdoutIsTTY: process.stdout.isTTY === true,
    untilStopped,
  };
}
