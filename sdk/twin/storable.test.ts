import { describe, expect, it } from 'vitest';
import { LONG_ID_UNITS, storableId, toStorableId } from './storable.js';

describe('storableId and toStorableId', () => {
  const short = 'x'.repeat(LONG_ID_UNITS - 2);
  const long = 'x'.repeat(LONG_ID_UNITS - 1);

  it('lets U+0000–U+0004 into ids under 63 units only, and a lone surrogate into none', () => {
    expect([`${short}\u0000`, `${short}\u0004`, `${long}\u0005`, 'a\u{1F600}b', `${long}\u{1F600}`, ''].map(storableId)).toEqual([true, true, true, true, true, true]);
    expect([`${long}\u0000`, `\u0003${long}`, 'a\uD800', '\uDC00a', '\uD800\uD800\uDC00', `${long}\uDBFF`].map(storableId)).toEqual([false, false, false, false, false, false]);
  });

  it('replaces what an id of the given length may not hold with U+FFFD, and leaves the rest as it is', () => {
    expect(toStorableId('a\u0001\uD800b')).toBe('a\u0001\uFFFDb');
    expect(toStorableId('a\u0001\uD800b', LONG_ID_UNITS)).toBe('a\uFFFD\uFFFDb');
    expect(toStorableId('a\u{1F600}\u0005', LONG_ID_UNITS)).toBe('a\u{1F600}\u0005');
    const filed = toStorableId(`${long}\u0000\u0002`);
    expect([filed, storableId(filed)]).toEqual([`${long}\uFFFD\uFFFD`, true]);
  });
});
