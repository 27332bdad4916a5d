/**
 * `kit world keys`, `kit world key make`, `kit world key revoke`: a world's named keys
 * (`tok_k_…`, docs/browser.md) managed from the command line, through `{world_api}/keys`.
 * The world decides who may manage them (its token; never a key, never the read token) and
 * refuses with its own code, which the CLI prints as it prints every failure.
 * world-commands.ts adds these to the `kit world` group.
 */
import { UsageError } from './args.js';
import { CliError, request, requestJson, segment } from './client.js';
import type { Endpoint } from './client.js';
import { flag, printAnswer } from './commands.js';
import type { Command } from './commands.js';
import { keyValues, printable, table } from './format.js';
import type { WorldTarget } from './targets.js';

/** A key as `GET {world_api}/keys` lists it (never its value). */
interface KeyRow {
  id: string;
  name: string;
  scope: string;
  for: string | null;
  createdBy: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
}

const api = (t: WorldTarget): Endpoint => ({ base: t.worldApi, token: t.token });

/** `expires` as a person reads it: never, the instant, or the instant and that it has passed (an expired key is listed until revoked). */
function expiry(expiresAt: string | null, now: number): string {
  if (expiresAt === null) return 'never';
  const at = Date.parse(expiresAt);
  return Number.isFinite(at) && at <= now ? `${expiresAt} (expired)` : expiresAt;
}

export const KEY_COMMANDS: Command<WorldTarget>[] = [
  {
    words: ['keys'],
    args: '',
    summary: "list the world's named keys (never their values)",
    help: "Named keys are managed with the world's token: the read token and a key are refused.",
    arity: [0, 0],
    async run(t, call) {
      const answer = await requestJson<{ keys: KeyRow[] }>(api(t), 'GET', '/keys');
      if (call.json) return printAnswer(call, answer.text);
      const keys = answer.value?.keys;
      if (!Array.isArray(keys)) throw new CliError('bad_answer', 'the world answered keys that are not a list');
      if (keys.length === 0) {
        call.io.out(`${t.name} has no keys`);
        return 0;
      }
      const now = Date.now();
      const rows = keys.map((k) => [k.id, k.name, k.scope, k.for ?? '-', k.createdBy, k.createdAt, k.lastUsedAt ?? 'never', expiry(k.expiresAt, now)]);
      for (const line of table(['id', 'name', 'scope', 'for', 'made by', 'created', 'last used', 'expires'], rows)) call.io.out(line);
      return 0;
    },
  },
  {
    words: ['key', 'make'],
    args: '<name>',
    summary: 'make a named key (tok_k_…) and print it, this once',
    help: [
      'The key opens the world as its token of that scope does: in x-kit-token, or as the app\'s API key',
      'for the twins. The world keeps only its hash: it is printed once, here. A name stands until it is',
      'revoked or replaced (key_name_taken; --replace ends the old key and makes a new one).',
    ].join('\n'),
    flags: [
      { name: 'scope', kind: 'string', value: 'read|write', help: 'what the key opens (default read)' },
      { name: 'for', kind: 'string', value: 'PERSON', help: 'the person the key is for (kit world key revoke --person ends it)' },
      { name: 'expires', kind: 'string', value: 'INSTANT', help: 'the ISO 8601 instant the key stops opening anything (default never)' },
      { name: 'replace', kind: 'boolean', help: 'end the key of that name (and person) and make a new one' },
    ],
    arity: [1, 1],
    async run(t, call) {
      const scope = flag(call, 'scope');
      if (scope !== undefined && scope !== 'read' && scope !== 'write') throw new UsageError(`--scope is read or write, got "${scope}"`);
      const body: Record<string, unknown> = { name: call.args[0] as string };
      if (scope !== undefined) body['scope'] = scope;
      const person = flag(call, 'for');
      if (person !== undefined) body['for'] = person;
      const expires = flag(call, 'expires');
      if (expires !== undefined) {
        // As the world reads an instant; one in the past is the world's to refuse.
        if (!/^\d{4}-\d\d-\d\dT/.test(expires) || !Number.isFinite(Date.parse(expires))) throw new UsageError(`--expires is an ISO 8601 instant (2026-12-31T00:00:00Z), got "${expires}"`);
        body['expiresAt'] = expires;
      }
      if (call.flags['replace'] === true) body['replace'] = true;
      let answer: { value: KeyRow & { key: string }; text: string };
      try {
        answer = await requestJson<KeyRow & { key: string }>(api(t), 'POST', '/keys', { json: body });
      } catch (e) {
        // The world's message names its JSON field (replace: true); here it is a flag.
        if (e instanceof CliError && e.code === 'key_name_taken') {
          throw new CliError(e.code, `a key named ${JSON.stringify(body['name'])}${person !== undefined ? ` for ${person}` : ''} stands already in ${t.name}; --replace ends it and makes a new one`);
        }
        throw e;
      }
      if (call.json) return printAnswer(call, answer.text);
      const k = answer.value;
      if (typeof k?.key !== 'string') throw new CliError('bad_answer', 'the world answered no key');
      call.io.out(`kit: made key ${printable(k.name)} in ${t.name}; it is shown this once: keep it now`);
      call.io.out('');
      for (const line of keyValues([['key', k.key], ['id', k.id], ['scope', k.scope], ['for', k.for ?? '-'], ['expires', k.expiresAt ?? 'never']])) call.io.out(`  ${line}`);
      call.io.out('');
      call.io.out("Use it as the world's token: in x-kit-token, or as the app's API key for the twins. Try:");
      call.io.out(`  kit world map --world ${printable(t.worldUrl)} --token ${printable(k.key)}`);
      return 0;
    },
  },
  {
    words: ['key', 'revoke'],
    args: '[id]',
    summary: 'revoke a named key by its id, or every key made by or for a person (--person)',
    help: 'A revoked key opens nothing from the next request, and the read session it opened ends.',
    flags: [{ name: 'person', kind: 'string', value: 'PERSON', help: 'revoke every key made by or for PERSON, instead of one id' }],
    arity: [0, 1],
    async run(t, call) {
      const id = call.args[0];
      const person = flag(call, 'person');
      if (id !== undefined && person !== undefined) throw new UsageError('kit world key revoke takes a key id or --person, not both');
      if (person !== undefined) {
        const answer = await requestJson<{ revoked: number }>(api(t), 'DELETE', '/keys', { query: { person } });
        if (call.json) return printAnswer(call, answer.text);
        const n = answer.value?.revoked;
        if (typeof n !== 'number') throw new CliError('bad_answer', 'the world did not say how many keys it revoked');
        call.io.out(`kit: revoked ${n} key${n === 1 ? '' : 's'} made by or for ${printable(person)}`);
        return 0;
      }
      if (id === undefined) throw new UsageError('kit world key revoke needs a key id (kit world keys lists them) or --person PERSON');
      await request(api(t), 'DELETE', `/keys/${segment(id)}`);
      if (!call.json) call.io.out(`kit: revoked key ${printable(id)}; it opens nothing now`);
      return 0;
    },
  },
];
