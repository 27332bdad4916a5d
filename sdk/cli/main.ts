/**
 * The `kit` command line, with its outside world (output, the world runner, signals)
 * passed in, so tests run it in-process. A dispatcher: `kit world serve` (serve.ts),
 * `kit world attach` (attach.ts), `kit world export` (export.ts), the other `kit world …` commands (world-commands.ts),
 * `kit host serve` (host-serve.ts), the other `kit host …` commands (host-commands.ts), `kit edge dev`
 * (edge-dev.ts), `kit pass …` (pass-commands.ts) and `kit twin …` (twin-commands.ts).
 */
import { UsageError } from './args.js';
import { describeServing, parseServeArgs, SERVE_USAGE, serveWorld } from './serve.js';
import type { ServeDeps } from './serve.js';
import { ATTACH_USAGE, parseAttachArgs, runAttach } from './attach.js';
import type { AttachDeps } from './attach.js';
import { commandList, commandRows, groupUsage, processClientDeps, runGroup } from './commands.js';
import type { ClientDeps, CliIo } from './commands.js';
import { WORLD_COMMANDS } from './world-commands.js';
import { HOST_COMMANDS } from './host-commands.js';
import { runHostServe } from './host-serve.js';
import { runExport } from './export.js';
import type { HostServeDeps } from './host-serve.js';
import { EDGE_DEV_USAGE, runEdgeDev } from './edge-dev.js';
import type { EdgeDevDeps } from './edge-dev.js';
import { PASS_COMMANDS } from './pass-commands.js';
import { twinCommands } from './twin-commands.js';

export type { CliIo } from './commands.js';

function usageText(): string {
  const rows = [
    ...commandRows(WORLD_COMMANDS),
    ...commandRows(HOST_COMMANDS),
    { synopsis: 'kit edge dev [--port N] [--persist dir]', summary: 'the edge variant, locally in workerd' },
    ...commandRows(PASS_COMMANDS),
    ...commandRows(twinCommands()),
    { synopsis: 'kit --help', summary: 'this help' },
    { synopsis: 'kit --version', summary: 'the version' },
  ];
  return [
    'kit: stateful twins of the APIs your app depends on, served in worlds.',
    '',
    'Usage:',
    ...commandList(rows),
    '',
    'Run `kit world --help`, `kit host --help`, `kit pass --help` or `kit twin --help` for the flags every command',
    'takes (how a command finds its world or host, --json), and `kit world <command> --help` for',
    'a command\'s own.',
  ].join('\n');
}

export const USAGE = usageText();
export const WORLD_USAGE = groupUsage(WORLD_COMMANDS);
export const HOST_USAGE = groupUsage(HOST_COMMANDS);
export const PASS_USAGE = groupUsage(PASS_COMMANDS);
export const TWIN_USAGE = groupUsage(twinCommands());

export interface CliDeps extends ServeDeps {
  /** Resolves with the signal's name when the process is asked to stop (SIGINT, SIGTERM). */
  untilStopped(): Promise<string>;
  version: string;
  /** For `kit world attach`: the entry's path, the stream listeners, the environment. */
  attach?: AttachDeps;
  /** For the other `kit world …` and `kit host …` commands; default: this process's (its env, directory, stdin, stdout). */
  client?: Partial<Omit<ClientDeps, 'untilStopped'>>;
  /** For `kit host serve`. */
  startHost?: HostServeDeps['startHost'];
  /** For `kit edge dev`. */
  startEdge?: EdgeDevDeps['startEdge'];
  /** The environment the serve commands read (`TRUSTED_ISSUERS`, `ADMIN_TOKEN`); default this process's. */
  env?: Record<string, string | undefined>;
}

/** Exit codes: 0 done, 1 failed, 2 bad usage. */
export async function main(argv: readonly string[], io: CliIo, deps: CliDeps): Promise<number> {
  const usage = (message: string, text: string): number => {
    io.err(`kit: ${message}`);
    io.err('');
    io.err(text);
    return 2;
  };
  const [command, ...rest] = argv;
  if (command === undefined) return usage('name a command', USAGE);
  if (command === '--help' || command === '-h' || command === 'help') {
    io.out(USAGE);
    return 0;
  }
  if (command === '--version' || command === '-v') {
    io.out(deps.version);
    return 0;
  }
  if (command === 'host' && rest[0] === 'serve') {
    if (deps.startHost === undefined) return usage('this kit cannot serve a host', USAGE);
    return runHostServe(rest.slice(1), io, { startHost: deps.startHost, untilStopped: deps.untilStopped }, deps.env ?? process.env);
  }
  if (command === 'edge') {
    if (rest[0] !== 'dev') return usage(rest[0] === undefined ? 'kit edge takes one command: dev' : `unknown command edge ${rest[0]}`, EDGE_DEV_USAGE);
    if (deps.startEdge === undefined) return usage('this kit cannot run the edge variant', USAGE);
    return runEdgeDev(rest.slice(1), io, { startEdge: deps.startEdge, untilStopped: deps.untilStopped }, deps.env ?? process.env);
  }
  const client = (): ClientDeps => ({ ...processClientDeps(deps.untilStopped), ...deps.client });
  if (command === 'host') return runGroup(HOST_COMMANDS, rest, io, client());
  if (command === 'pass') return runGroup(PASS_COMMANDS, rest, io, client());
  if (command === 'twin') return runGroup(twinCommands((options) => deps.openWorld(options)), rest, io, client());
  if (command !== 'world') return usage(`unknown command ${command}`, USAGE);
  const [sub, ...args] = rest;
  if (sub === 'attach') {
    let options;
    try {
      options = parseAttachArgs(args, deps.attach?.env ?? process.env);
    } catch (e) {
      if (e instanceof UsageError) return usage(e.message, ATTACH_USAGE);
      throw e;
    }
    if (options === 'help') {
      io.out(ATTACH_USAGE);
      return 0;
    }
    return runAttach(options, io, deps.attach);
  }
  if (sub === 'export') return runExport(args, io, client());
  if (sub !== 'serve') return runGroup(WORLD_COMMANDS, rest, io, client());

  let options;
  try {
    options = parseServeArgs(args, deps.env ?? process.env);
  } catch (e) {
    if (e instanceof UsageError) return usage(e.message, SERVE_USAGE);
    throw e;
  }
  if (options === 'help') {
    io.out(SERVE_USAGE);
    return 0;
  }

  let serving;
  try {
    serving = await serveWorld(options, deps);
  } catch (e) {
    if (e instanceof UsageError) return usage(e.message, SERVE_USAGE);
    io.err(`kit: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  for (const line of describeServing(serving)) io.out(line);
  const signal = await deps.untilStopped();
  io.out(`kit: ${signal}: stopping (finishing requests in flight, flushing commits)`);
  try {
    await serving.server.close();
  } catch (e) {
    io.err(`kit: the world did not close cleanly: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  io.out('kit: stopped');
  return 0;
}
