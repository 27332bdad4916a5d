/**
 * The SMTP twin's MIME parser and encodings, called directly (they are plain functions that
 * also run in the sandbox). Inputs are binary strings, as the session hands them over.
 */
import { describe, expect, it } from 'vitest';
import { parseAddresses, parseHeaderValue, parseMail, parseMailDate } from './mime.js';
import { base64Decode, base64Encode, base64Size, decodeWords, quotedPrintableDecode, utf8Decode, utf8Encode } from './encoding.js';

const bin = (s: string) => Buffer.from(s, 'utf8').toString('latin1');

describe('encodings', () => {
  it('round-trips base64 and UTF-8 for every byte and for astral characters', () => {
    const all = Array.from({ length: 256 }, (_, i) => String.fromCharCode(i)).join('');
    expect(base64Encode(all)).toBe(Buffer.from(all, 'latin1').toString('base64'));
    expect(base64Decode(Buffer.from(all, 'latin1').toString('base64').replace(/(.{76})/g, '$1\r\n'))).toBe(all);
    for (const n of [0, 1, 2, 3, 4]) expect(base64Encode('abcd'.slice(0, n))).toBe(Buffer.from('abcd'.slice(0, n)).toString('base64'));
    const text = 'Grüße ✓ 😀';
    expect(utf8Encode(text)).toBe(bin(text));
    expect(utf8Decode(bin(text))).toBe(text);
  });

  it('replaces malformed UTF-8 with U+FFFD instead of failing', () => {
    expect(utf8Decode('a\u00ff\u00c3b')).toBe('a\ufffd\ufffdb');
    expect(utf8Decode('\u00e2\u0082')).toBe('\ufffd\ufffd');
  });

  it('decodes quoted-printable with soft breaks, and RFC 2047 words split inside a character', () => {
    expect(quotedPrintableDecode('caf=C3=A9 =\r\nau lait=3D')).toBe(bin('café au lait='));
    // "✓" (E2 9C 93) split across two B words: joined as bytes before decoding.
    const words = `=?UTF-8?B?${Buffer.from([0x48, 0xe2]).toString('base64')}?= =?UTF-8?B?${Buffer.from([0x9c, 0x93]).toString('base64')}?=`;
    expect(decodeWords(words)).toBe('H✓');
    expect(decodeWords('=?iso-8859-1?Q?Gr=FC=DFe_Welt?= und mehr')).toBe('Grüße Welt und mehr');
    expect(decodeWords('plain =?utf-8?q?caf=C3=A9?=')).toBe('plain café');
  });
  it('decodes quoted-printable and sizes base64 in linear time on long runs of blanks and padding', () => {
    expect(quotedPrintableDecode(' '.repeat(200_000) + 'x')).toBe(' '.repeat(200_000) + 'x');
    expect(quotedPrintableDecode('a' + ' \t'.repeat(100_000) + '\r\nb' + '\t'.repeat(100_000) + '\nc')).toBe('a\r\nb\nc');
    expect(base64Size('='.repeat(200_000) + 'A')).toBe(150_000);
    expect(base64Size('QUJD' + '='.repeat(200_000))).toBe(3);
    const m = parseMail(`Content-Type: text/plain\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nhi${' '.repeat(300_000)}=\r\nthere`);
    expect(m.text).toBe(`hi${' '.repeat(300_000)}there`);
  });
});

describe('headers and addresses', () => {
  it('reads parameters with quotes and RFC 2231 continuations', () => {
    expect(parseHeaderValue('text/plain; charset="utf-8"; format=flowed')).toEqual({ value: 'text/plain', params: { charset: 'utf-8', format: 'flowed' } });
    expect(parseHeaderValue("attachment; filename*0*=utf-8''Gr%C3%BC; filename*1*=%C3%9Fe.txt").params['filename']).toBe('Grüße.txt');
    expect(parseHeaderValue('attachment; filename="a;b.txt"').params['filename']).toBe('a;b.txt');
  });

  it('splits address lists on commas outside quotes, and decodes names', () => {
    expect(parseAddresses('"Doe, John" <john@x.test>, =?utf-8?Q?Zo=C3=AB?= <zoe@x.test>, bare@x.test, Team: a@x.test, b@x.test;')).toEqual([
      { name: 'Doe, John', address: 'john@x.test' },
      { name: 'Zoë', address: 'zoe@x.test' },
      { name: '', address: 'bare@x.test' },
      { name: '', address: 'a@x.test' },
      { name: '', address: 'b@x.test' },
    ]);
  });

  it('strips comments outside quoted strings, nested and with escapes', () => {
    expect(parseAddresses('a@x.test (Ada Lovelace)')).toEqual([{ name: 'Ada Lovelace', address: 'a@x.test' }]);
    expect(parseAddresses('a@x.test (outer (inner) tail)')).toEqual([{ name: 'outer (inner) tail', address: 'a@x.test' }]);
    expect(parseAddresses('a@x.test (Ada \\) L), b@x.test')).toEqual([
      { name: 'Ada ) L', address: 'a@x.test' },
      { name: '', address: 'b@x.test' },
    ]);
    expect(parseAddresses('"John (Work)" <j@x.test>, Ada (the first) <a@x.test>')).toEqual([
      { name: 'John (Work)', address: 'j@x.test' },
      { name: 'Ada', address: 'a@x.test' },
    ]);
    // A comma or a `<` inside a comment is comment text.
    expect(parseAddresses('a@x.test (x, <y>), b@x.test')).toEqual([
      { name: 'x, <y>', address: 'a@x.test' },
      { name: '', address: 'b@x.test' },
    ]);
  });

  // Each of these took seconds to minutes (quadratic scans); the test timeout catches a regression.
  it('parses hostile address headers in linear time', () => {
    const parens = '('.repeat(200_000) + 'a@b.c';
    expect(parseAddresses(parens)).toEqual([{ name: '', address: parens }]); // an unclosed comment is kept as written
    const nested = '('.repeat(100_000) + ')'.repeat(100_000);
    expect(parseAddresses(`${nested} a@b.c`)).toEqual([{ name: nested.slice(1, -1), address: 'a@b.c' }]);
    expect(parseAddresses('a@b.c ' + '(c)'.repeat(100_000))).toEqual([{ name: 'c', address: 'a@b.c' }]);
    const colons = 'x'.repeat(100_000) + '@' + ':'.repeat(100_000);
    expect(parseAddresses(colons)).toEqual([{ name: '', address: colons }]);
    expect(parseAddresses(':'.repeat(200_000) + 'a@b.c')).toEqual([{ name: '', address: 'a@b.c' }]);
    expect(parseAddresses('a@b.c, ' + '"'.repeat(100_001) + 'x, '.repeat(50_000))).toHaveLength(2); // an unclosed quote runs to the end
    expect(parseAddresses('"' + '\\'.repeat(200_000) + '" <a@b.c>')).toEqual([{ name: '\\'.repeat(100_000), address: 'a@b.c' }]);
    expect(parseAddresses('a@b.c (' + '\\'.repeat(200_000) + ')')).toEqual([{ name: '\\'.repeat(100_000), address: 'a@b.c' }]);
    expect(parseAddresses('\\'.repeat(200_001) + '@b.c')).toEqual([{ name: '', address: '\\'.repeat(200_001) + '@b.c' }]);
    const many = parseAddresses('a@b.c,'.repeat(100_000));
    expect([many.length, many[99_999]]).toEqual([100_000, { name: '', address: 'a@b.c' }]);
    const m = parseMail(`From: ${'('.repeat(300_000)}a@b.c\r\nTo: ${colons}\r\nCc: ${nested} c@d.e\r\n\r\nbody`);
    expect([m.from[0]!.address.length, m.to[0]!.address, m.cc[0]!.address, m.text]).toEqual([300_005, colons, 'c@d.e', 'body']);
  });

  it('reads RFC 5322 dates with zones', () => {
    expect(parseMailDate('Thu, 1 Jan 2026 10:00:00 +0100')).toBe('2026-01-01T09:00:00.000Z');
    expect(parseMailDate('1 Feb 26 23:59 GMT')).toBe('2026-02-01T23:59:00.000Z');
    expect(parseMailDate('not a date')).toBeNull();
  });
});

describe('parseMail', () => {
  it('reads multipart/mixed with alternative text and html, base64 and QP, and an attachment', () => {
    const raw = [
      'From: Ada <ada@x.test>',
      'To: bob@x.test',
      'Subject: =?UTF-8?B?' + Buffer.from('Grüße').toString('base64') + '?=',
      'Message-ID: <m1@x.test>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="outer"',
      '',
      'preamble',
      '--outer',
      'Content-Type: multipart/alternative;',
      ' boundary=inner',
      '',
      '--inner',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      'Gr=C3=BC=C3=9Fe, a long line =',
      'joined',
      '--inner',
      'Content-Type: text/html; charset=utf-8',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('<p>Grüße</p>').toString('base64'),
      '--inner--',
      '--outer',
      'Content-Type: application/pdf; name="doc.pdf"',
      'Content-Disposition: attachment; filename="doc.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('%PDF-1.4 binary \u0000\u0001').toString('base64'),
      '--outer--',
      'epilogue',
      '',
    ].join('\r\n');
    const m = parseMail(raw);
    expect(m.subject).toBe('Grüße');
    expect(m.messageId).toBe('<m1@x.test>');
    expect(m.from).toEqual([{ name: 'Ada', address: 'ada@x.test' }]);
    expect(m.text).toBe('Grüße, a long line joined');
    expect(m.html).toBe('<p>Grüße</p>');
    expect(m.attachments).toEqual([
      { filename: 'doc.pdf', contentType: 'application/pdf', size: Buffer.byteLength('%PDF-1.4 binary \u0000\u0001'), contentId: null, disposition: 'attachment', contentBase64: Buffer.from('%PDF-1.4 binary \u0000\u0001').toString('base64') },
    ]);
    expect(m.headers.find((h) => h.name === 'Content-Type')?.value).toBe('multipart/mixed; boundary="outer"');
  });

  it('takes a message with bare LF line ends, and one with no headers or no body', () => {
    expect(parseMail('Subject: lf\n\nline one\nline two\n').text).toBe('line one\nline two\n');
    expect(parseMail('\r\njust a body').text).toBe('just a body');
    expect(parseMail('Subject: only headers').text).toBe('');
  });

  it('never throws on malformed structure: a missing closing boundary, an absent boundary, deep nesting', () => {
    expect(parseMail('Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nunclosed').text).toBe('unclosed');
    expect(parseMail('Content-Type: multipart/mixed\r\n\r\nno boundary').attachments).toHaveLength(1);
    let nested = 'leaf';
    for (let i = 0; i < 100; i++) nested = `Content-Type: multipart/mixed; boundary=b${i}\r\n\r\n--b${i}\r\n${nested}\r\n--b${i}--`;
    expect(() => parseMail(nested)).not.toThrow();
  });

  it('decodes a latin-1 and a windows-1252 text part', () => {
    expect(parseMail('Content-Type: text/plain; charset=iso-8859-1\r\n\r\ncaf\u00e9').text).toBe('café');
    expect(parseMail('Content-Type: text/plain; charset=windows-1252\r\n\r\n\u0093q\u0094').text).toBe('\u201cq\u201d');
  });
});
