/**
 * The WASI a component twin may import, and what it gets: nothing that reaches outside the
 * call. Clocks read the call's `now-ms`, randomness comes from the call's entropy (the
 * world's seeded generator), the environment is empty, standard output and error are dropped,
 * standard input is closed, there are no directories, and `exit` fails the call. Sockets, HTTP
 * and anything not listed here are refused when the component is loaded (load.ts). Pure.
 */

/** Where the stubs read the call they serve. */
export interface WasiCall {
  nowMs(): number;
  random(): number;
  /** What the component wrote to standard error (a panic's message says why it trapped). */
  stderr(bytes: Uint8Array): void;
}

/** The WASI interfaces (without version) a component twin may import: each answered by a stub below. */
export const ALLOWED_WASI = [
  'wasi:cli/environment',
  'wasi:cli/exit',
  'wasi:cli/stdin',
  'wasi:cli/stdout',
  'wasi:cli/stderr',
  'wasi:cli/terminal-input',
  'wasi:cli/terminal-output',
  'wasi:cli/terminal-stdin',
  'wasi:cli/terminal-stdout',
  'wasi:cli/terminal-stderr',
  'wasi:clocks/monotonic-clock',
  'wasi:clocks/wall-clock',
  'wasi:filesystem/preopens',
  'wasi:filesystem/types',
  'wasi:io/error',
  'wasi:io/poll',
  'wasi:io/streams',
  'wasi:random/random',
  'wasi:random/insecure',
  'wasi:random/insecure-seed',
] as const;

/** The interfaces of the twin's own world (sdk/wit/twin.wit). */
export const KIT_INTERFACES = ['kit:twin/tree', 'kit:twin/entropy', 'kit:twin/types'] as const;

/** Why a component's import is refused, or null when the host answers it. */
export function refusedImport(name: string): string | null {
  if ((KIT_INTERFACES as readonly string[]).includes(name) || (ALLOWED_WASI as readonly string[]).includes(name)) return null;
  if (name.startsWith('wasi:sockets/')) return `it imports ${name}: a twin has no network (sockets are refused)`;
  if (name.startsWith('wasi:http/')) return `it imports ${name}: a twin makes no outbound requests (HTTP is refused)`;
  if (name.startsWith('wasi:')) return `it imports ${name}, which a twin may not have (allowed WASI: clocks and random as stubs reading the call, cli and io stubs, no files)`;
  return `it imports ${name}, which the kit:twin world does not offer (only kit:twin/tree and kit:twin/entropy)`;
}

class Pollable {
  ready(): boolean {
    return true;
  }
  block(): void {}
}

class InputStream {
  read(): never {
    throw { tag: 'closed' };
  }
  blockingRead(): never {
    throw { tag: 'closed' };
  }
  skip(): never {
    throw { tag: 'closed' };
  }
  blockingSkip(): never {
    throw { tag: 'closed' };
  }
  subscribe(): Pollable {
    return new Pollable();
  }
}

/** Standard output (dropped: a twin's output is its answer) and error (handed to `sink`, which keeps what explains a failure). */
class OutputStream {
  constructor(private readonly sink?: (bytes: Uint8Array) => void) {}
  checkWrite(): bigint {
    return 1n << 20n;
  }
  write(bytes: Uint8Array): void {
    this.sink?.(bytes);
  }
  blockingWriteAndFlush(bytes: Uint8Array): void {
    this.sink?.(bytes);
  }
  flush(): void {}
  blockingFlush(): void {}
  writeZeroes(): void {}
  blockingWriteZeroesAndFlush(): void {}
  splice(): bigint {
    return 0n;
  }
  blockingSplice(): bigint {
    return 0n;
  }
  subscribe(): Pollable {
    return new Pollable();
  }
}

class IoError {
  toDebugString(): string {
    return 'no I/O in a twin';
  }
}

/** A file descriptor: none is ever handed out (no preopened directories), so none is ever used. */
class Descriptor {}
class DirectoryEntryStream {}
class TerminalInput {}
class TerminalOutput {}

function randomBytes(call: WasiCall, length: bigint | number): Uint8Array {
  const n = Number(length);
  if (!Number.isSafeInteger(n) || n < 0 || n > 1 << 20) throw new RangeError(`wasi:random asked for ${String(length)} bytes`);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(call.random() * 256);
  return out;
}

function randomU64(call: WasiCall): bigint {
  return (BigInt(Math.floor(call.random() * 2 ** 32)) << 32n) | BigInt(Math.floor(call.random() * 2 ** 32));
}

/** The import object's WASI part: every allowed interface, keyed as jco's instantiate reads it. */
export function wasiImports(call: WasiCall): Record<string, Record<string, unknown>> {
  const stdin = new InputStream();
  const stdout = new OutputStream();
  const stderr = new OutputStream((bytes) => call.stderr(bytes));
  const random = {
    getRandomBytes: (length: bigint) => randomBytes(call, length),
    getRandomU64: () => randomU64(call),
    getInsecureRandomBytes: (length: bigint) => randomBytes(call, length),
    getInsecureRandomU64: () => randomU64(call),
  };
  return {
    'wasi:cli/environment': { getEnvironment: () => [], getArguments: () => [], initialCwd: () => undefined },
    'wasi:cli/exit': {
      exit: (status: unknown) => {
        throw new Error(`the component called wasi:cli/exit (${JSON.stringify(status)}): a twin answers, it does not exit`);
      },
    },
    'wasi:cli/stdin': { getStdin: () => stdin },
    'wasi:cli/stdout': { getStdout: () => stdout },
    'wasi:cli/stderr': { getStderr: () => stderr },
    'wasi:cli/terminal-input': { TerminalInput },
    'wasi:cli/terminal-output': { TerminalOutput },
    'wasi:cli/terminal-stdin': { getTerminalStdin: () => undefined },
    'wasi:cli/terminal-stdout': { getTerminalStdout: () => undefined },
    'wasi:cli/terminal-stderr': { getTerminalStderr: () => undefined },
    'wasi:clocks/monotonic-clock': {
      now: () => BigInt(call.nowMs()) * 1_000_000n,
      resolution: () => 1_000_000n,
      subscribeInstant: () => new Pollable(),
      subscribeDuration: () => new Pollable(),
    },
    'wasi:clocks/wall-clock': {
      now: () => {
        const ms = call.nowMs();
        return { seconds: BigInt(Math.floor(ms / 1000)), nanoseconds: (((ms % 1000) + 1000) % 1000) * 1_000_000 };
      },
      resolution: () => ({ seconds: 0n, nanoseconds: 1_000_000 }),
    },
    'wasi:filesystem/preopens': { getDirectories: () => [] },
    'wasi:filesystem/types': { Descriptor, DirectoryEntryStream, filesystemErrorCode: () => undefined },
    'wasi:io/error': { Error: IoError },
    'wasi:io/poll': { Pollable, poll: (list: unknown[]) => Uint32Array.from(list.keys()) },
    'wasi:io/streams': { InputStream, OutputStream },
    'wasi:random/random': { getRandomBytes: random.getRandomBytes, getRandomU64: random.getRandomU64 },
    'wasi:random/insecure': { getInsecureRandomBytes: random.getInsecureRandomBytes, getInsecureRandomU64: random.getInsecureRandomU64 },
    'wasi:random/insecure-seed': { insecureSeed: () => [randomU64(call), randomU64(call)] },
  };
}
