/**
 * The `kit` command line run in-process (sdk/cli/main.ts), as a test drives it: its lines on
 * standard output and error, the bytes it wrote raw (checkpoint, scenario get), an environment
 * and directory of the test's own (never the developer's KIT_WORLD), and a Ctrl-C to send.
 */
import { main } from '../../sdk/cli/main.js';
import type { CliDeps } from '../../sdk/cli/main.js';

export interface KitRun {
  /** Resolves with the exit code. */
  done: Promise<number>;
  /** Lines printed on standard output, so far. */
  out: string[];
  /** Lines printed on standard error, so far. */
  err: string[];
  /** The raw bytes written to standard output, so far (beside `out`'s lines). */
  stdout(): Buffer;
  /** Ctrl-C. */
  interrupt(): void;
}

export interface KitOptions {
  env?: NodeJS.ProcessEnv;
  /** Default: a directory that does not exist, so no `.kit/token` is found by accident. */
  cwd?: string;
  /** Standard input's bytes. */
  stdin?: string | Uint8Array;
  stdoutIsTTY?: boolean;
}

const NO_DIRECTORY = '/nonexistent/kit-cli-test';

/** Starts `kit <argv>`; see `kit` for one that is awaited. */
export function startKit(argv: readonly string[], options: KitOptions = {}): KitRun {
  const out: string[] = [];
  const err: string[] = [];
  const chunks: Buffer[] = [];
  let interrupt: (signal: string) => void = () => {};
  const stopped = new Promise<string>((resolve) => {
    interrupt = resolve;
  });
  const deps: CliDeps = {
    version: 'test',
    loadTwins: () => Promise.reject(new Error('this test serves no world from kit')),
    openWorld: () => Promise.reject(new Error('this test serves no world from kit')),
    untilStopped: () => stopped,
    client: {
      env: options.env ?? {},
      cwd: options.cwd ?? NO_DIRECTORY,
      stdoutIsTTY: options.stdoutIsTTY ?? false,
      readStdin: async (maxBytes) => {
        const bytes = typeof options.stdin === 'string' ? Buffer.from(options.stdin) : Buffer.from(options.stdin ?? new Uint8Array());
        return bytes.subarray(0, maxBytes + 1);
      },
      writeStdout: async (chunk) => {
        chunks.push(Buffer.from(chunk));
      },
    },
  };
  const done = main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, deps);
  return { done, out, err, stdout: () => Buffer.concat(chunks), interrupt: () => interrupt('SIGINT') };
}

export interface KitResult {
  code: number;
  out: string[];
  err: string[];
  /** Raw bytes written to standard output. */
  stdout: Buffer;
  /** `out` joined, for `toContain`. */
  text: string;
}

/** Runs `kit <argv>` to its end. */
export async function kit(argv: readonly string[], options: KitOptions = {}): Promise<KitResult> {
  const run = startKit(argv, options);
  const code = await run.done;
  return { code, out: run.out, err: run.err, stdout: run.stdout(), text: run.out.join('\n') };
}

/** Waits until `test()` holds, polling; throws after `ms`. */
export async function until(test: () => boolean, ms = 10_000, what = 'the condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
