import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultPagesDir, loadPageFiles } from './pages.js';

const made: string[] = [];
function pagesDir(files: Record<string, string | Uint8Array>): string {
  const dir = mkdtempSync(join(tmpdir(), 'kit-pages-'));
  made.push(dir);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const text = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : new TextDecoder().decode(bytes));

describe('loadPageFiles', () => {
  it('reads the world page and each mirror, with their types, bytes as they are', () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0x00]);
    const dir = pagesDir({
      'world/app.js': 'console.log("world")',
      'world/app.css': 'body{}',
      'mirrors/stripe/app.js': 'console.log("stripe")',
      'mirrors/stripe/logo.png': png,
      'mirrors/github/app.js': 'console.log("github")',
    });
    const pages = loadPageFiles(dir);
    expect(pages.has('world')).toBe(true);
    expect(pages.has('stripe')).toBe(true);
    expect(pages.has('github')).toBe(true);
    expect(text(pages.asset('world', 'app.js')?.body)).toBe('console.log("world")');
    expect(pages.asset('world', 'app.css')?.type).toBe('text/css; charset=utf-8');
    expect(pages.asset('stripe', 'app.js')?.type).toBe('text/javascript; charset=utf-8');
    const logo = pages.asset('stripe', 'logo.png');
    expect(logo?.type).toBe('image/png');
    expect([...(logo?.body ?? [])]).toEqual([...png]);
    // A page's files are its own: the world page has no logo, stripe no stylesheet.
    expect(pages.asset('world', 'logo.png')).toBeNull();
    expect(pages.asset('stripe', 'app.css')).toBeNull();
  });

  it('serves no page without its app.js, and nothing but the files directly in a page', () => {
    const dir = pagesDir({
      'world/app.css': 'body{}',
      'mirrors/hello/app.css': 'p{}',
      'mirrors/smtp/app.js': 'x',
      'mirrors/smtp/nested/secret.js': 'no',
      'mirrors/smtp/.hidden': 'no',
      'mirrors/Bad Name/app.js': 'no',
      'mirrors/world/app.js': 'a mirror may not take the world page name',
      'mirrors/stray.js': 'no',
    });
    const pages = loadPageFiles(dir);
    expect(pages.has('world')).toBe(false);
    expect(pages.has('hello')).toBe(false);
    expect(pages.has('smtp')).toBe(true);
    expect(pages.has('Bad Name')).toBe(false);
    expect(pages.asset('smtp', 'nested')).toBeNull();
    expect(pages.asset('smtp', 'secret.js')).toBeNull();
    expect(pages.asset('smtp', '.hidden')).toBeNull();
    expect(pages.asset('smtp', '../stray.js')).toBeNull();
  });

  it('leaves out a symbolic link to a file outside the page', () => {
    const outside = pagesDir({ 'secret.txt': 'do not serve' });
    const dir = pagesDir({ 'world/app.js': 'x' });
    symlinkSync(join(outside, 'secret.txt'), join(dir, 'world', 'leak.txt'));
    expect(loadPageFiles(dir).asset('world', 'leak.txt')).toBeNull();
  });

  it('answers no pages, without throwing, where nothing was built', () => {
    const pages = loadPageFiles(join(tmpdir(), 'kit-pages-never-made', 'dist', 'pages'));
    expect(pages.has('world')).toBe(false);
    expect(pages.asset('world', 'app.js')).toBeNull();
    // Built, but the mirrors only (no world page yet): those are served.
    const mirrorsOnly = loadPageFiles(pagesDir({ 'mirrors/hello/app.js': 'x' }));
    expect(mirrorsOnly.has('world')).toBe(false);
    expect(mirrorsOnly.has('hello')).toBe(true);
  });

  it('looks for dist/pages of the repository when run from source', () => {
    expect(defaultPagesDir().endsWith(`${sep}dist${sep}pages${sep}`)).toBe(true);
  });
});
