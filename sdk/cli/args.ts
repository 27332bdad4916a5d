/**
 * A small argument parser for `kit`: `--name value`, `--name=value`, boolean flags,
 * repeatable flags (`--trust a --trust b`), `-h`, `-m value`, and `--` to end flags. Anything it does not know is a `UsageError` (the CLI
 * prints it on one line with the usage and exits 2).
 */

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface FlagSpec {
  /** Long name without dashes, e.g. `port`. */
  name: string;
  /** `string` flags take a value; `boolean` flags take none; `list` flags take a value each time they are given. */
  kind: 'string' | 'boolean' | 'list';
  /** A one-letter alias, e.g. `h`. */
  short?: string;
}

export interface ParsedArgs {
  positionals: string[];
  /** Flags given, by long name; a repeated string flag keeps the last value. */
  flags: Record<string, string | true>;
  /** `list` flags given, by long name, each value in the order given. */
  lists: Record<string, string[]>;
}

/** Parses `argv` (without the node and script paths) against `specs`. */
export function parseArgs(argv: readonly string[], specs: readonly FlagSpec[]): ParsedArgs {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const byShort = new Map(specs.filter((s) => s.short !== undefined).map((s) => [s.short as string, s]));
  const positionals: string[] = [];
  const flags = Object.create(null) as Record<string, string | true>;
  const lists = Object.create(null) as Record<string, string[]>;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      const spec = byName.get(name);
      if (spec === undefined) throw new UsageError(`unknown flag --${name}`);
      if (spec.kind === 'boolean') {
        if (eq >= 0) throw new UsageError(`--${name} takes no value`);
        flags[name] = true;
        continue;
      }
      let value: string | undefined;
      if (eq >= 0) value = arg.slice(eq + 1);
      else {
        value = argv[i + 1];
        // `--port --host x` is a missing value, not a port named "--host".
        if (value === undefined || value.startsWith('--')) throw new UsageError(`--${name} needs a value`);
        i++;
      }
      if (spec.kind === 'list') (lists[name] ??= []).push(value);
      else flags[name] = value;
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1) {
      const spec = byShort.get(arg.slice(1));
      if (spec === undefined) throw new UsageError(`unknown flag ${arg}`);
      if (spec.kind === 'boolean') {
        flags[spec.name] = true;
        continue;
      }
      // `-m "message"`: a short flag that takes a value takes the next word, as its long name does.
      const value = argv[i + 1];
      if (value === undefined || value.startsWith('--')) throw new UsageError(`${arg} needs a value`);
      i++;
      if (spec.kind === 'list') (lists[spec.name] ??= []).push(value);
      else flags[spec.name] = value;
      continue;
    }
    positionals.push(arg);
  }
  return { positionals, flags, lists };
}

/** A port: an integer 0–65535 (0 picks a free one). */
export function parsePort(value: string): number {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new UsageError(`--port must be a number from 0 to 65535, got "${value}"`);
  return Number(value);
}

/** A comma-separated list; empty items are dropped, duplicates kept once. */
export function parseList(value: string): string[] {
  return [...new Set(value.split(',').map((s) => s.trim()).filter((s) => s !== ''))];
}
