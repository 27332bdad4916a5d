/**
 * What the mirror makes of the text the twin answers: a patch's numbered lines, Markdown bodies
 * (which must never become markup or links a page would follow), `Link` headers, errors.
 */
import { describe, expect, it } from 'vitest';
import { parsePatch } from './diff.js';
import { errorOf, parseLinks } from './github.js';
import { parseInline, parseMarkdown } from './markdown.js';

describe('a patch', () => {
  it('numbers each side as GitHub\'s diff view does', () => {
    const patch = '@@ -1,3 +1,4 @@ intro\n line one\n-line two\n+line 2\n+line 2b\n line three\n@@ -10 +11 @@\n-end\n\\ No newline at end of file';
    expect(parsePatch(patch)).toEqual([
      { kind: 'hunk', text: '@@ -1,3 +1,4 @@ intro', old: null, new: null },
      { kind: 'ctx', text: 'line one', old: 1, new: 1 },
      { kind: 'del', text: 'line two', old: 2, new: null },
      { kind: 'add', text: 'line 2', old: null, new: 2 },
      { kind: 'add', text: 'line 2b', old: null, new: 3 },
      { kind: 'ctx', text: 'line three', old: 3, new: 4 },
      { kind: 'hunk', text: '@@ -10 +11 @@', old: null, new: null },
      { kind: 'del', text: 'end', old: 10, new: null },
      { kind: 'note', text: 'No newline at end of file', old: null, new: null },
    ]);
  });
});

describe('Markdown', () => {
  it('reads the blocks a README or an issue uses', () => {
    const doc = parseMarkdown('# Shop\n\nA *small* shop.\nSecond line.\n\n```ts\nconst a = 1;\n```\n\n- [x] done\n- [ ] todo\n\n1. one\n2. two\n\n> quoted\n\n---');
    expect(doc.map((b) => b.t)).toEqual(['heading', 'para', 'code', 'list', 'list', 'quote', 'rule']);
    expect(doc[0]).toEqual({ t: 'heading', level: 1, children: [{ t: 'text', text: 'Shop' }] });
    expect(doc[1]).toEqual({ t: 'para', children: [{ t: 'text', text: 'A ' }, { t: 'em', children: [{ t: 'text', text: 'small' }] }, { t: 'text', text: ' shop.\nSecond line.' }] });
    expect(doc[2]).toEqual({ t: 'code', lang: 'ts', text: 'const a = 1;' });
    expect(doc[3]).toMatchObject({ t: 'list', ordered: false, items: [{ task: true }, { task: false }] });
    expect(doc[4]).toMatchObject({ t: 'list', ordered: true, start: 1, items: [{ task: null }, { task: null }] });
  });

  it('links only to http, https and mailto; shows an image as its alt text', () => {
    expect(parseInline('[site](https://example.test/a) and [x](javascript:alert(1)) ![logo](https://e.test/l.png)')).toEqual([
      { t: 'link', href: 'https://example.test/a', children: [{ t: 'text', text: 'site' }] },
      { t: 'text', text: ' and ' },
      { t: 'text', text: 'x' },
      // The rest of `javascript:alert(1)` after the first `)` is text.
      { t: 'text', text: ') ' },
      { t: 'text', text: '[logo]' },
    ]);
    expect(parseInline('see https://example.test/x.')).toEqual([{ t: 'text', text: 'see ' }, { t: 'link', href: 'https://example.test/x', children: [{ t: 'text', text: 'https://example.test/x' }] }, { t: 'text', text: '.' }]);
    expect(parseInline('<script>alert(1)</script>')).toEqual([{ t: 'text', text: '<script>alert(1)</script>' }]);
    expect(parseInline('snake_case_name and `a_b`')).toEqual([{ t: 'text', text: 'snake_case_name and ' }, { t: 'code', text: 'a_b' }]);
  });

  it('stays quick on a hostile body of the largest size GitHub takes', () => {
    for (const body of ['**a'.repeat(21_845), '`'.repeat(65_536), '`a'.repeat(32_768), '['.repeat(65_536), '> '.repeat(32_768), `${'- '.repeat(30)}x\n`.repeat(2000)]) {
      const started = performance.now();
      parseMarkdown(body);
      expect(performance.now() - started, body.slice(0, 10)).toBeLessThan(1500);
    }
  });
});

describe('GitHub\'s Link header', () => {
  it('gives the page numbers, whatever address the twin was reached at', () => {
    const link = '<http://shop--acme.localhost:4440/acme/shop/github/repos/o/r/issues?per_page=3&page=2>; rel="next", <http://shop--acme.localhost:4440/acme/shop/github/repos/o/r/issues?per_page=3&page=5>; rel="last"';
    expect(parseLinks(link)).toEqual({ next: 2, prev: null, first: null, last: 5 });
    expect(parseLinks('</repos/o/r/issues?page=1>; rel="prev first"')).toEqual({ next: null, prev: 1, first: 1, last: null });
    expect(parseLinks(null)).toEqual({ next: null, prev: null, first: null, last: null });
    expect(parseLinks('garbage, <x?page=abc>; rel="next"')).toEqual({ next: null, prev: null, first: null, last: null });
  });
});

describe('an error answer', () => {
  it('says GitHub\'s message or the host\'s code', () => {
    const gh = errorOf(404, JSON.stringify({ message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' }), 'GET /repos/a/b');
    expect([gh.status, gh.code, gh.message]).toEqual([404, 'http_404', 'GET /repos/a/b: Not Found']);
    const host = errorOf(401, JSON.stringify({ error: { code: 'unauthenticated', message: 'No session.' } }), 'GET /user/repos');
    expect([host.status, host.code, host.message]).toEqual([401, 'unauthenticated', 'No session.']);
    expect(errorOf(502, '<html>bad gateway</html>', 'GET /x').message).toBe('GET /x answered 502: <html>bad gateway</html>');
  });
});
