/**
 * A message's snippet, called directly: the text body's first words, or the visible text of
 * the HTML body, read in one pass whatever the markup.
 */
import { describe, expect, it } from 'vitest';
import { snippetOf, visibleText } from './summary.js';

describe('snippets', () => {
  it('prefers the text body, and reads the HTML only when there is none', () => {
    expect(snippetOf('  Hi\n\tthere  ', '<p>ignored</p>')).toBe('Hi there');
    expect(snippetOf(' \n ', '<p>from&nbsp;the <b>html</b></p>')).toBe('from the html');
    expect(snippetOf(null, null)).toBe('');
  });

  it('drops tags and what a reader never sees, and reads entities', () => {
    const flat = (html: string) => visibleText(html).replace(/\s+/g, ' ').trim();
    expect(flat('<HEAD><Title>t</Title></HEAD><p>a&lt;b &#x41;&#66; &bogus; &#99999999;</p><STYLE>x{}</style><script type="x">y()</script>z')).toBe('a<b AB &bogus; &#99999999; z');
    // An element that never closes ends the text there; so does a tag that never closes.
    expect(visibleText('before<style>p{} and everything after')).toBe('before');
    expect(visibleText('before<p class="x')).toBe('before');
  });

  it('takes time in proportion to the markup, however hostile', () => {
    const hostile = '<style>x</style><p>'.repeat(100_000);
    const started = performance.now();
    expect(visibleText(hostile).trim()).toBe('');
    // One pass over 2 MB; a pass per element (lower-casing the rest each time) takes minutes.
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
