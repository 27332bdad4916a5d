/**
 * The benches' server processes as Linux shows them: a child server started and waited for
 * (`startServerChild`: it prints a line once it listens), its CPU from /proc, and pinning to CPUs.
 * Light on purpose (no miniflare): bench/edge/servers.ts and bench/roots/servers.ts both use it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** Linux's USER_HZ is 100 on every architecture Node runs on. */
const MS_PER_TICK = 10;

/** The fields of /proc/<pid>/stat after the name in parentheses (which may hold spaces): [0] is the state. */
export function statFields(pid: number): string[] {
  const line = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return line.slice(line.lastIndexOf(')') + 2).split(' ');
}

/** User + system CPU time of the whole process so far (every thread, those that ended too), ms. */
export function processCpuMs(pid: number): number {
  const f = statFields(pid);
  return (Number(f[11]) + Number(f[12])) * MS_PER_TICK;
}

/**
 * Pins every thread of `pid` to `cpus` (a taskset list, e.g. "0"); answers whether it could. As
 * bench/http does: servers on CPU 0, the load on CPU 1, so that the two do not share a core.
 */
export function pin(pid: number, cpus: string): boolean {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Every CPU, as a taskset list (to undo this process's own pinning). */
export const ALL_CPUS = `0-${availableParallelism() - 1}`;

const children = new Set<ChildProcess>();
// A bench that fails or is interrupted leaves no server behind.
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

export interface ServerChild<T> {
  pid: number;
  /** What `ready` made of the server's output once it listened. */
  ready: T;
  /** SIGTERM, then SIGKILL after 30 s; waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * `node <args>` as a server: waits until `ready(output)` makes something of what it printed on
 * stdout (undefined: not yet), or fails with its output when it exits first or `timeoutMs` passes.
 */
export async function startServerChild<T>(args: readonly string[], name: string, timeoutMs: number, ready: (stdout: string) => T | undefined): Promise<ServerChild<T>> {
  const child = spawn(process.execPath, [...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stdout = '';
  let output = '';
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      children.delete(child);
      resolve();
    }),
  );
  const made = await new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the ${name} server did not listen within ${timeoutMs / 1000} s:\n${output}`)), timeoutMs);
    child.stdout?.on('data', (b: Buffer) => {
      stdout += b.toString();
      output += b.toString();
      const found = ready(stdout);
      if (found !== undefined) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    child.stderr?.on('data', (b: Buffer) => (output += b.toString()));
    void exit.then(() => {
      clearTimeout(timer);
      reject(new Error(`the ${name} server exited before listening:\n${output}`));
    });
  });
  return {
    pid: child.pid as number,
    ready: made,
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exit;
      clearTimeout(killer);
    },
  };
}
