/**
 * The built pages embedded into the Worker (build.ts `pageFilesSource`, the `pageFiles` export of
 * `kit-edge:assets`): the module it writes, loaded as the Worker loads it, gives the core the same
 * bytes Node reads from dist/pages/.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pageFilesOf } from '../core/pages.js';
import { loadPageFiles } from '../node/pages.js';
import { pageFilesSource } from './build.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function pagesDir(files: Record<string, string | Uint8Array>): string {
  const dir = mkdtempSync(join(tmpdir(), 'kit-edge-pages-'));
  made.push(dir);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

/** The generated source as the Worker's bundle would evaluate it. */
async function embedded(dir: string): Promise<Record<string, Record<string, string | Uint8Array>>> {
  const module = (await import(`data:text/javascript;base64,${Buffer.from(pageFilesSource(dir)).toString('base64')}`)) as { pageFiles: Record<string, Record<string, string | Uint8Array>> };
  return module.pageFiles;
}

describe('the pages embedded in the edge Worker', () => {
  it('carries text as text and binary files byte for byte, as Node reads them', async () => {
    const every = new Uint8Array(256).map((_, i) => i);
    const dir = pagesDir({
      'world/app.js': 'const s = "</script>\\u2028 ünïcode `${x}`";',
      'world/app.css': 'body{content:"\\""}',
      'mirrors/stripe/app.js': 'export {}',
      'mirrors/stripe/font.woff2': every,
    });
    const files = await embedded(dir);
    expect(Object.keys(files).sort()).toEqual(['stripe', 'world']);
    expect(files['world']!['app.js']).toBe('const s = "</script>\\u2028 ünïcode `${x}`";');
    expect(files['stripe']!['font.woff2']).toBeInstanceOf(Uint8Array);

    const edge = pageFilesOf(files);
    const node = loadPageFiles(dir);
    for (const [page, file] of [['world', 'app.js'], ['world', 'app.css'], ['stripe', 'app.js'], ['stripe', 'font.woff2']] as const) {
      expect([...edge.asset(page, file)!.body]).toEqual([...node.asset(page, file)!.body]);
      expect(edge.asset(page, file)!.type).toBe(node.asset(page, file)!.type);
    }
    expect([...edge.asset('stripe', 'font.woff2')!.body]).toEqual([...every]);
  });

  it('embeds no pages where none were built', async () => {
    const files = await embedded(join(tmpdir(), 'kit-edge-pages-never-made'));
    expect(files).toEqual({});
    expect(pageFilesOf(files).has('world')).toBe(false);
  });
});
