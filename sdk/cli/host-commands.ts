/**
 * `kit host <command>`: the multi-world host's admin endpoints (`{base}/-/worlds`, …) with the
 * admin token. The host is found by sdk/cli/targets.ts `findHost`; `kit host serve` (the host
 * itself) is dispatched by main.ts.
 */
import { UsageError, parseList } from './args.js';
import { request, requestJson, segment } from './client.js';
import { flag, printAnswer } from './commands.js';
import type { ClientDeps, Command, CommandGroup } from './commands.js';
import { keyValues, printable, table } from './format.js';
import { findHost, parseWorldName } from './targets.js';
import type { HostTarget } from './targets.js';
import type { WorldRow } from '../../host/index.js';
import { TWIN_COMMANDS } from './host-twin-commands.js';


function printWorld(t: HostTarget, lines: (line: string) => void, name: string, token: string, readToken: string): void {
  lines('');
  for (const line of keyValues([['world URL', `${t.base}/${name}`], ['world API', `${t.base}/-/${name}`], ['token', token], ['read token', readToken]])) lines(`  ${line}`);
  lines('');
  lines('Try:');
  lines(`  kit world clock --world ${printable(`${t.base}/${name}`)} --token ${printable(token)}`);
}

const commands: Command<HostTarget>[] = [
  {
    words: ['worlds'],
    args: '',
    summary: "list the host's worlds (tokens with --json only)",
    arity: [0, 0],
    async run(t, call) {
      const answer = await requestJson<{ worlds: WorldRow[] }>(t, 'GET', '/-/worlds');
      if (call.json) return printAnswer(call, answer.text);
      const worlds = answer.value.worlds;
      if (worlds.length === 0) {
        call.io.out(`${t.base} serves no worlds yet: kit host create <org>/<world> --vendors stripe`);
        return 0;
      }
      const rows = worlds.map((w) => [
        w.name,
        w.twins.map((x) => x.vendor).join(',') || '-',
        w.base ?? '-',
        w.owner ?? '-',
        w.budget ?? '-',
        w.open === undefined ? '-' : w.open ? 'yes' : 'no',
        w.expiresAt ?? 'never',
      ]);
      for (const line of table(['name', 'twins', 'branch of', 'owner', 'budget', 'open', 'expires'], rows)) call.io.out(line);
      return 0;
    },
  },
  {
    words: ['vendors'],
    args: '',
    summary: 'the twins a world on this host may serve',
    arity: [0, 0],
    async run(t, call) {
      const answer = await requestJson<{ vendors: string[] }>(t, 'GET', '/-/vendors');
      if (call.json) return printAnswer(call, answer.text);
      for (const v of answer.value.vendors) call.io.out(printable(v));
      return 0;
    },
  },
  {
    words: ['create'],
    args: '<org>/<world>',
    summary: 'make a bare world with the twins named, and print its tokens',
    flags: [
      { name: 'vendors', kind: 'string', value: 'a,b', required: true, help: 'the twins it serves (kit host vendors lists them)' },
      { name: 'owner', kind: 'string', value: 'O', help: 'record the org that owns it' },
    ],
    arity: [1, 1],
    async run(t, call) {
      const { org, world } = parseWorldName(call.args[0] as string);
      const raw = flag(call, 'vendors');
      if (raw === undefined) throw new UsageError('kit host create needs --vendors a,b (kit host vendors lists them)');
      const vendors = parseList(raw);
      if (vendors.length === 0) throw new UsageError('--vendors needs at least one twin');
      const owner = flag(call, 'owner');
      const answer = await requestJson<WorldRow>(t, 'POST', '/-/worlds', { json: { org, world, vendors, ...(owner !== undefined ? { owner } : {}) } });
      if (call.json) return printAnswer(call, answer.text);
      const w = answer.value;
      call.io.out(`kit: made world ${printable(w.name)} with ${w.twins.map((x) => printable(x.vendor)).join(', ') || 'no twins'}`);
      printWorld(t, (l) => call.io.out(l), w.name, w.token, w.readToken);
      return 0;
    },
  },
  {
    words: ['rotate'],
    args: '<org>/<world>',
    summary: "mint a world's tokens anew; the old ones are refused from the next request",
    arity: [1, 1],
    async run(t, call) {
      const { org, world } = parseWorldName(call.args[0] as string);
      const answer = await requestJson<{ name: string; token: string; readToken: string }>(t, 'POST', `/-/worlds/${segment(org)}/${segment(world)}/rotate`);
      if (call.json) return printAnswer(call, answer.text);
      const r = answer.value;
      call.io.out(`kit: new tokens for ${printable(r.name)}; the old ones open nothing now`);
      printWorld(t, (l) => call.io.out(l), r.name, r.token, r.readToken);
      return 0;
    },
  },
  {
    words: ['rm'],
    args: '<org>/<world>',
    summary: 'remove a world and its history (not one that has branches)',
    arity: [1, 1],
    async run(t, call) {
      const { org, world } = parseWorldName(call.args[0] as string);
      await request(t, 'DELETE', `/-/worlds/${segment(org)}/${segment(world)}`);
      if (!call.json) call.io.out(`kit: removed world ${org}/${world}`);
      return 0;
    },
  },
  ...TWIN_COMMANDS,
];

export const HOST_COMMANDS: CommandGroup<HostTarget> = {
  name: 'host',
  commands,
  flags: [
    { name: 'url', kind: 'string', value: 'URL', help: "the host's base URL, as kit host serve prints it (default $KIT_HOST)" },
    { name: 'token', kind: 'string', value: 'T', help: "the host's admin token (default $KIT_HOST_TOKEN)" },
    { name: 'dir', kind: 'string', value: 'DIR', help: 'else the host served from DIR, by its .kit-host/url and .kit-host/admin (default: the current directory)' },
  ],
  others: [{ synopsis: 'kit host serve [dir]', summary: 'serve many worlds under one URL, with branches and a console (kit host serve --help for its flags)' }],
  footer: [
    'The host is found from --url and --token, else KIT_HOST and KIT_HOST_TOKEN, else the',
    '.kit-host/url and .kit-host/admin that kit host serve writes in the directory it serves.',
    "A world's own commands (its clock, timeline, branches, …) are kit world's, with the world's token.",
    'A failure prints one line, kit: <message> (<code>), and exits 1; bad usage exits 2. See docs/cli.md.',
  ].join('\n'),
  target: (flags, deps: ClientDeps) =>
    findHost(
      {
        ...(typeof flags['url'] === 'string' ? { url: flags['url'] } : {}),
        ...(typeof flags['token'] === 'string' ? { token: flags['token'] } : {}),
        ...(typeof flags['dir'] === 'string' ? { dir: flags['dir'] } : {}),
      },
      deps,
    ),
};
