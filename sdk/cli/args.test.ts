import { describe, expect, it } from 'vitest';
import { parseArgs, parseList, parsePort, UsageError } from './args.js';
import type { FlagSpec } from './args.js';

const specs: FlagSpec[] = [
  { name: 'port', kind: 'string' },
  { name: 'host', kind: 'string' },
  { name: 'help', kind: 'boolean', short: 'h' },
  { name: 'trust', kind: 'list' },
  { name: 'message', kind: 'string', short: 'm' },
];

describe('parseArgs', () => {
  it('reads flags with a separate or an = value, booleans, and positionals in any order', () => {
    expect(parseArgs(['dir', '--port', '80', '--host=::1', '-h'], specs)).toEqual({
      positionals: ['dir'],
      flags: { port: '80', host: '::1', help: true },
      lists: {},
    });
    expect(parseArgs(['--port=', 'a', 'b'], specs)).toEqual({ positionals: ['a', 'b'], flags: { port: '' }, lists: {} });
  });

  it('keeps every value of a repeated list flag, in order, apart from the other flags', () => {
    expect(parseArgs(['--trust', 'https://a.example', '--port', '1', '--trust=http://127.0.0.1:4460'], specs)).toEqual({
      positionals: [],
      flags: { port: '1' },
      lists: { trust: ['https://a.example', 'http://127.0.0.1:4460'] },
    });
    expect(() => parseArgs(['--trust'], specs)).toThrow('--trust needs a value');
  });

  it('reads a short flag that takes a value from the next word, a message that starts with a dash included', () => {
    expect(parseArgs(['cut', '-m', 'add the Pro plan'], specs)).toEqual({ positionals: ['cut'], flags: { message: 'add the Pro plan' }, lists: {} });
    expect(parseArgs(['-m', '-1 price'], specs).flags).toEqual({ message: '-1 price' });
    expect(() => parseArgs(['-m'], specs)).toThrow('-m needs a value');
    expect(() => parseArgs(['-m', '--port', '1'], specs)).toThrow('-m needs a value');
  });

  it('treats everything after -- as positionals', () => {
    expect(parseArgs(['--', '--port', '-h'], specs)).toEqual({ positionals: ['--port', '-h'], flags: {}, lists: {} });
  });

  it('refuses unknown flags, missing values and values on booleans with a one-line UsageError', () => {
    const cases: [string[], string][] = [
      [['--nope'], 'unknown flag --nope'],
      [['-x'], 'unknown flag -x'],
      [['--port'], '--port needs a value'],
      [['--port', '--host', 'x'], '--port needs a value'],
      [['--help=yes'], '--help takes no value'],
    ];
    for (const [argv, message] of cases) {
      const error = (() => {
        try {
          parseArgs(argv, specs);
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).toBe(message);
      expect((error as Error).message).not.toContain('\n');
    }
  });
});

describe('parsePort and parseList', () => {
  it('accepts 0 to 65535 and nothing else', () => {
    expect([parsePort('0'), parsePort('4440'), parsePort('65535')]).toEqual([0, 4440, 65535]);
    for (const bad of ['65536', '-1', '1e3', '', 'http', '44 40', '0x10']) expect(() => parsePort(bad)).toThrow(UsageError);
  });

  it('splits on commas, trims, drops empties and repeats', () => {
    expect(parseList(' hello, stripe,,hello ')).toEqual(['hello', 'stripe']);
    expect(parseList(',')).toEqual([]);
  });
});
