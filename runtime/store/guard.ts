/**
 * What is checked before an LMDB store is opened, so that a mistake outside the process
 * does not silently lose or scramble a world.
 *
 * **One process per store.** LMDB itself lets many processes open one environment, but the
 * engine keeps each twin's head and counts in memory: a second `kit world serve` of the same
 * directory handed out the same ids and overwrote the first one's log entries, without a
 * word. A lock file (`twinkit.lock`: pid and host) is taken with an exclusive create. A lock
 * whose process is gone (a crash, `kill -9`) is taken over; so is one from another host,
 * whose process cannot be checked from here (with a warning). A lock this process holds
 * (a world's worker thread started again after the watchdog ended it) is its own.
 *
 * **A readable data file.** LMDB maps `data.mdb` into memory and trusts it: random bytes in
 * it ended the process with SIGSEGV, a truncated one with SIGBUS, both without a message, and
 * an empty one opened as a new, empty world. The file's two meta pages are checked first
 * (LMDB's magic, and a file long enough for the newest one's last page).
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { KitError } from '../errors.js';

const LOCK_FILE = 'twinkit.lock';

/**
 * Whether a process with this pid runs on this host (EPERM: it does, under another user). A
 * zombie does not count: a server just killed with -9 is one until its parent reaps it.
 */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // `pid (comm) S …`: the state follows the last `)`.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true; // No /proc (macOS): kill(0) said it runs.
  }
}

/** Whether the process is still running after waiting up to `ms` for it to end (one being killed). */
function stillRunning(pid: number, ms: number): boolean {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let waited = 0; running(pid); waited += 100) {
    if (waited >= ms) return true;
    Atomics.wait(pause, 0, 0, 100);
  }
  return false;
}

/** Takes the store's lock, or throws `storage_locked`. Answers the release (idempotent). */
export function lockStore(dir: string): () => void {
  const path = join(dir, LOCK_FILE);
  const mine = `${process.pid}\n${hostname()}\n`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      try {
        writeSync(fd, mine);
      } finally {
        closeSync(fd);
      }
      let released = false;
      return () => {
        if (released) return;
        released = true;
        // Only a lock still ours: a later process may have taken over a lock it found stale.
        try {
          if (readFileSync(path, 'utf8') === mine) unlinkSync(path);
        } catch {
          // Already gone.
        }
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    let held = '';
    try {
      held = readFileSync(path, 'utf8');
    } catch {
      continue; // Released meanwhile: try again.
    }
    const [pidText = '', host = ''] = held.split('\n');
    const pid = /^\d{1,10}$/.test(pidText) ? Number(pidText) : NaN;
    if (held === mine || (host === hostname() && pid === process.pid)) {
      // This process's own lock: a world's worker thread ended by the watchdog never released it.
      return () => {
        try {
          if (readFileSync(path, 'utf8') === held) unlinkSync(path);
        } catch {
          // Already gone.
        }
      };
    }
    if (host === hostname() && Number.isInteger(pid) && stillRunning(pid, 2000)) {
      throw new KitError('storage_locked', `the world in ${dir} is open in process ${pid}: stop that server first (if no twinkit runs, remove ${path})`, { pid });
    }
    if (host !== hostname() && host !== '') {
      console.warn(`twinkit: taking over the lock of ${dir} from ${host} (pid ${pidText}), which this host cannot check; two hosts must not serve one world directory`);
    }
    try {
      unlinkSync(path);
    } catch {
      // Someone else removed it first; the exclusive create decides.
    }
  }
  throw new KitError('storage_locked', `could not take the lock of ${dir} (${path}): another process keeps taking it`);
}

/** LMDB's magic, and where this lmdb build's meta page keeps it and what follows. */
const MAGIC = 0xbeefc0de;
/** The page header before the meta (24 bytes in lmdb-js's LMDB, 16 in LMDB 0.9). */
const META_AT = [24, 16];

interface Meta {
  pageSize: number;
  lastPage: number;
  txnId: number;
}

/** The meta of one page as lmdb-js's LMDB (format version 2) writes it, or null. */
function readMeta(page: Buffer): Meta | null | 'other' {
  if (page.length < 160) return null;
  if (page.readUInt32LE(META_AT[0] as number) === MAGIC && page.readUInt32LE(28) === 2) {
    // mm_dbs[0].md_pad holds the page size; mm_last_pg and mm_txnid follow the two dbs.
    const pageSize = page.readUInt32LE(48);
    const lastPage = Number(page.readBigUInt64LE(144));
    const txnId = Number(page.readBigUInt64LE(152));
    if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return null;
    return { pageSize, lastPage, txnId };
  }
  // Another LMDB format: LMDB checks it itself; only a page with no magic at all is refused.
  if (page.readUInt32LE(META_AT[1] as number) === MAGIC) return 'other';
  return null;
}

/** Throws `storage_corrupt` when `<dir>/data.mdb` exists but LMDB could not read it safely. */
export function checkDataFile(dir: string): void {
  const path = join(dir, 'data.mdb');
  if (!existsSync(path)) return;
  const corrupt = (why: string): KitError =>
    new KitError('storage_corrupt', `the world's store ${path} is damaged (${why}); it was left as it is. Restore it from a backup, or move it away to start an empty world`);
  const size = statSync(path).size;
  if (size === 0) throw corrupt('the file is empty');
  const head = Buffer.alloc(Math.min(size, 2 * 65536));
  const fd = openSync(path, 'r');
  try {
    readSync(fd, head, 0, head.length, 0);
  } finally {
    closeSync(fd);
  }
  const first = readMeta(head);
  if (first === null) throw corrupt('its first page is not an LMDB meta page');
  if (first === 'other') return;
  const second = head.length >= 2 * first.pageSize ? readMeta(head.subarray(first.pageSize)) : null;
  const metas = [first, ...(second !== null && second !== 'other' ? [second] : [])];
  const newest = metas.reduce((a, b) => (b.txnId > a.txnId ? b : a));
  const needed = (newest.lastPage + 1) * newest.pageSize;
  if (size < needed) throw corrupt(`it is ${size} bytes, and its newest state needs ${needed}: it was cut short`);
}
