/**
 * `kit world changeset …` and `kit world origin …` refusing bad usage before anything is sent:
 * exit 2, one line and the usage. The world named is on a port just closed: a command that sent a
 * request would exit 1 (unreachable) instead, so exit 2 is also proof that nothing went out,
 * the other world's token least of all. The commands against real worlds are in
 * changeset-commands.test.ts.
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { kit } from '../../test/helpers/kit-cli.js';
import type { KitResult } from '../../test/helpers/kit-cli.js';

/** A world on a loopback port that was free a moment ago: nothing answers there. */
let NOWHERE: string;
beforeAll(async () => {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as AddressInfo;
  await new Promise((done) => probe.close(done));
  NOWHERE = `http://127.0.0.1:${port}/local/demo`;
});

/** The line of a request that went out to the world NOWHERE names and found nobody. */
function unreachable(path: string): RegExp {
  return new RegExp(`^kit: cannot reach http://127\\.0\\.0\\.1:\\d+/-/local/demo${path}: connection refused \\(unreachable\\)$`);
}
const ORIGIN_TOKEN = 'tok_origin0secret0value0never0in0argv';

async function world(argv: string[], options: { env?: NodeJS.ProcessEnv; stdin?: string } = {}): Promise<KitResult> {
  return kit(['world', ...argv, '--world', NOWHERE, '--token', 'tok_here'], { env: options.env ?? {}, ...(options.stdin !== undefined ? { stdin: options.stdin } : {}) });
}

function expectUsage(r: KitResult, line: string, usage?: string): void {
  expect(r.code, r.err.join('\n')).toBe(2);
  expect(r.out).toEqual([]);
  expect(r.err[0]).toBe(line);
  if (usage !== undefined) expect(r.err[2]).toMatch(new RegExp(`^Usage: ${usage.replace(/[[\]|.()]/g, '\\$&')}`));
}

describe('kit world changeset: bad usage sends nothing', () => {
  it('names its commands when none is given, and an unknown one', async () => {
    expectUsage(await world(['changeset']), 'kit: name a command: kit world changeset cut|list|show|verify|approve|push|deploy');
    expectUsage(await world(['changeset', 'land', 'cs-1']), 'kit: unknown command world changeset land; the commands are kit world changeset cut|list|show|verify|approve|push|deploy');
  });

  it('cut needs a message; -m and --message both give it; a bad --name is refused', async () => {
    expectUsage(await world(['changeset', 'cut']), 'kit: kit world changeset cut needs -m <message>: what the changes are for', 'kit world changeset cut --message TEXT [--name N]');
    expectUsage(await world(['changeset', 'cut', '-m', '  ']), 'kit: kit world changeset cut needs -m <message>: what the changes are for');
    expectUsage(await world(['changeset', 'cut', '-m']), 'kit: -m needs a value');
    expectUsage(await world(['changeset', 'cut', '-m', 'x', '--name', 'Big Name']), `kit: --name is named with lower-case letters, digits, '.', '_' and '-' (1 to 64, starting with a letter or digit), got "Big Name"`);
    // Given well, it goes to the world: here, a world that is not there.
    const sent = await world(['changeset', 'cut', '-m', 'add the Pro plan', '--name', 'pro-plan']);
    expect(sent.code).toBe(1);
    expect(sent.err).toEqual([expect.stringMatching(unreachable('/changesets'))]);
  });

  it('a changeset name that could name another path is refused before it becomes a URL', async () => {
    for (const argv of [['show', '..'], ['verify', '.'], ['approve', '../keys', '--as', 'a'], ['deploy', 'a/b', '--confirm'], ['push', '%2e%2e']]) {
      const r = await world(['changeset', ...argv]);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err[0]).toMatch(/^kit: a changeset is named with lower-case letters/);
    }
  });

  it('approve needs --as; show takes one name', async () => {
    expectUsage(await world(['changeset', 'approve', 'cs-1']), 'kit: kit world changeset approve needs --as <who>: the person approving', 'kit world changeset approve <name> --as WHO [--note TEXT]');
    expectUsage(await world(['changeset', 'show']), 'kit: kit world changeset show needs <name>');
    expectUsage(await world(['changeset', 'show', 'a', 'b']), 'kit: kit world changeset show takes <name>, got a b');
  });
});

describe("another world's token never comes from argv", () => {
  it('a flag that would take the token is unknown, and the value given with it is not repeated', async () => {
    for (const argv of [['origin', 'set', 'https://w.example/acme/prod', '--origin-token', ORIGIN_TOKEN], ['changeset', 'push', 'cs-1', '--to', 'https://w.example/acme/prod', `--to-token=${ORIGIN_TOKEN}`]]) {
      const r = await world(argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err[0]).toMatch(/^kit: unknown flag --(origin-token|to-token)$/);
      expect(r.err.join('\n')).not.toContain(ORIGIN_TOKEN);
    }
  });

  it('origin set: no source, an unset or empty variable, a token where the name goes, two sources', async () => {
    expectUsage(
      await world(['origin', 'set', 'https://w.example/acme/prod']),
      "kit: kit world origin set needs the other world's token: --token-env VAR (the environment variable that holds it) or --stdin (never the token itself)",
      'kit world origin set <url> [--token-env VAR] [--stdin]',
    );
    expectUsage(await world(['origin', 'set', 'https://w.example/acme/prod', '--token-env', 'PROD_TOKEN']), 'kit: --token-env names PROD_TOKEN, which is not set in the environment: export PROD_TOKEN=… first (kit never takes the secret itself on the command line)');
    expectUsage(await world(['origin', 'set', 'https://w.example/acme/prod', '--token-env', 'PROD_TOKEN'], { env: { PROD_TOKEN: '' } }), 'kit: --token-env names PROD_TOKEN, which is empty');
    const typed = await world(['origin', 'set', 'https://w.example/acme/prod', '--token-env', ORIGIN_TOKEN], { env: { PROD_TOKEN: ORIGIN_TOKEN } });
    expect(typed.code).toBe(2);
    expect(typed.err[0]).toMatch(/^kit: --token-env takes the name of an environment variable/);
    expect(typed.err.join('\n')).not.toContain(ORIGIN_TOKEN);
    expectUsage(await world(['origin', 'set', 'https://w.example/acme/prod', '--token-env', 'PROD_TOKEN', '--stdin'], { env: { PROD_TOKEN: ORIGIN_TOKEN }, stdin: ORIGIN_TOKEN }), 'kit: --token-env and --stdin both give the token: give one');
    expectUsage(await world(['origin', 'set', 'https://w.example/acme/prod', '--stdin'], { stdin: '\n' }), 'kit: --stdin read nothing: pipe the token in (kit never takes it on the command line)');
  });

  it('a token with a space or a control character is refused without being repeated; a good one goes to the world', async () => {
    const spaced = await world(['origin', 'set', 'https://w.example/acme/prod', '--stdin'], { stdin: `${ORIGIN_TOKEN} extra` });
    expect(spaced.code).toBe(1);
    expect(spaced.err).toEqual(["kit: the token holds spaces or control characters; give it as the world's server printed it (bad_token)"]);
    // A newline at its end (echo, a file) is not part of it.
    const piped = await world(['origin', 'set', 'https://w.example/acme/prod', '--stdin'], { stdin: `${ORIGIN_TOKEN}\n` });
    expect(piped.err).toEqual([expect.stringMatching(unreachable('/origin'))]);
    const fromEnv = await world(['origin', 'set', 'https://w.example/acme/prod', '--token-env', 'PROD_TOKEN'], { env: { PROD_TOKEN: ORIGIN_TOKEN } });
    expect(fromEnv.err).toEqual([expect.stringMatching(unreachable('/origin'))]);
  });

  it('push --to: a URL that is not a world, no token, a token flag without --to', async () => {
    expectUsage(await world(['changeset', 'push', 'cs-1', '--to', 'https://w.example/prod', '--to-token-env', 'T'], { env: { T: ORIGIN_TOKEN } }), 'kit: --to: the world URL must end in /<org>/<world> (as kit world serve prints it), got https://w.example/prod');
    expectUsage(
      await world(['changeset', 'push', 'cs-1', '--to', 'https://w.example/acme/prod']),
      "kit: kit world changeset push --to needs the other world's token: --to-token-env VAR (the environment variable that holds it) or --stdin (never the token itself)",
    );
    expectUsage(await world(['changeset', 'push', 'cs-1', '--to-token-env', 'T'], { env: { T: ORIGIN_TOKEN } }), "kit: --to-token-env and --stdin give the token of the world --to names; the origin's is the world's own (kit world origin set)");
  });
});

describe('kit world origin pull: choices', () => {
  it('--take is ours or theirs; --resolve is KEY=ours|theirs', async () => {
    expectUsage(await world(['origin', 'pull', '--take', 'mine']), 'kit: --take is ours or theirs, got "mine"', 'kit world origin pull [--take ours|theirs] [--resolve KEY=ours|theirs]...');
    expectUsage(await world(['origin', 'pull', '--resolve', 'stripe/product/prod_1#name']), 'kit: --resolve is KEY=ours or KEY=theirs (the KEY a conflict is listed with), got "stripe/product/prod_1#name"');
    expectUsage(await world(['origin', 'pull', '--resolve', '=ours']), 'kit: --resolve is KEY=ours or KEY=theirs (the KEY a conflict is listed with), got "=ours"');
    const sent = await world(['origin', 'pull', '--resolve', 'stripe/product/prod_1#a=b=theirs', '--take', 'ours']);
    expect(sent.err).toEqual([expect.stringMatching(unreachable('/origin/pull'))]);
  });
});

describe('help', () => {
  it('the world help names every command; push and origin set say why no token goes on the command line', async () => {
    const help = (await kit(['world', '--help'])).text;
    for (const synopsis of [
      'kit world changeset cut --message TEXT [--name N]',
      'kit world changeset list',
      'kit world changeset show <name> [--type T]... [--internal] [--full]',
      'kit world changeset verify <name>',
      'kit world changeset approve <name> --as WHO [--note TEXT]',
      'kit world changeset push <name> [--to URL] [--to-token-env VAR] [--stdin]',
      'kit world changeset deploy [name] [--confirm]',
      'kit world origin ',
      'kit world origin show',
      'kit world origin set <url> [--token-env VAR] [--stdin]',
      'kit world origin pull [--take ours|theirs] [--resolve KEY=ours|theirs]...',
      'kit world origin push',
    ]) {
      expect(help).toContain(synopsis);
    }
    const cut = (await kit(['world', 'changeset', 'cut', '--help'])).text;
    expect(cut).toContain('-m, --message TEXT');
    for (const argv of [['changeset', 'push'], ['origin', 'set']]) {
      expect((await kit(['world', ...argv, '--help'])).text).toContain("No flag takes the token's value: name the environment variable that holds it, or pipe it into --stdin.");
    }
    expect((await kit(['world', 'changeset', 'deploy', '--help'])).text).toContain('without --confirm nothing is sent');
  });
});
