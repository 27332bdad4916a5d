/**
 * The world's pages as Node reads them: `make build` (pages/build.mjs) writes the world page
 * to `dist/pages/world/` and each twin's mirror to `dist/pages/mirrors/<vendor>/`; a host reads
 * them once when it starts and hands them to the core (host/core/pages.ts `PageFiles`). A host
 * started without them (a checkout not built) serves no pages rather than failing.
 */
import { readdirSync, readFileSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PAGE_FILE, pageFilesOf, type PageFiles } from '../core/pages.js';

/** A mirror's directory name: a vendor id. `world` is the world page's own name, never a mirror's. */
const VENDOR = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/**
 * Where the built pages are: `dist/pages/` beside this module's compiled tree (dist/host/node/ →
 * dist/pages/). Run from source (a test through vitest), the repository's `dist/pages/`.
 */
export function defaultPagesDir(): string {
  const fromSource = import.meta.url.endsWith('.ts');
  return fileURLToPath(new URL(fromSource ? '../../dist/pages/' : '../../pages/', import.meta.url));
}

/** The regular files directly in `dir` whose names a page may have; none when `dir` is missing. */
function filesIn(dir: string): Record<string, Uint8Array> {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return {};
  }
  const files: Record<string, Uint8Array> = {};
  for (const entry of entries) {
    if (!entry.isFile() || !PAGE_FILE.test(entry.name)) continue;
    const bytes = readFileSync(join(dir, entry.name));
    files[entry.name] = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  return files;
}

/** The pages' files under `dir`, by page: `world`, and a vendor per mirror. */
export function readPageDirs(dir: string): Record<string, Record<string, Uint8Array>> {
  const pages: Record<string, Record<string, Uint8Array>> = {};
  const world = filesIn(join(dir, 'world'));
  if (Object.keys(world).length > 0) pages['world'] = world;
  let mirrors: Dirent[] = [];
  try {
    mirrors = readdirSync(join(dir, 'mirrors'), { withFileTypes: true });
  } catch {
    // No mirror built.
  }
  for (const entry of mirrors) {
    if (!entry.isDirectory() || !VENDOR.test(entry.name) || entry.name === 'world') continue;
    const files = filesIn(join(dir, 'mirrors', entry.name));
    if (Object.keys(files).length > 0) pages[entry.name] = files;
  }
  return pages;
}

/**
 * The built pages, read once: `world` and every mirror that has its `app.js`. A missing
 * directory, or a page without `app.js`, is a page the host does not serve (404), not an error.
 */
export function loadPageFiles(dir: string = defaultPagesDir()): PageFiles {
  return pageFilesOf(readPageDirs(dir));
}
