/**
 * A mail of about 3 MB as a mail library sends one, for the codec bench: multipart/mixed holding
 * a multipart/alternative (text/plain in ISO-8859-1, quoted-printable; text/html in
 * windows-1252, quoted-printable), encoded words in ISO-8859-2 and UTF-8, a KOI8-R text
 * attachment, a forwarded message/rfc822 and about 2.8 MB of binary attachments in base64.
 * Answered as a binary string (one character per byte), as the SMTP twin receives it.
 */
function wrap(text: string, width = 76): string {
  const lines: string[] = [];
  for (let i = 0; i < text.length; i += width) lines.push(text.slice(i, i + width));
  return lines.join('\r\n');
}

/** Quoted-printable of a binary string, soft breaks at 76 columns. */
function qp(bytes: string): string {
  const out: string[] = [];
  let line = '';
  for (const ch of bytes) {
    const c = ch.charCodeAt(0);
    const piece = ch === '\n' ? '\r\n' : c === 13 ? '' : (c >= 33 && c <= 126 && c !== 61) || c === 32 ? ch : '=' + c.toString(16).toUpperCase().padStart(2, '0');
    if (piece === '\r\n') {
      out.push(line + '\r\n');
      line = '';
      continue;
    }
    if (line.length + piece.length > 75) {
      out.push(line + '=\r\n');
      line = '';
    }
    line += piece;
  }
  out.push(line);
  return out.join('');
}

function pseudoBytes(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1103515245) + 12345) | 0;
    b[i] = (s >>> 16) & 0xff;
  }
  return b;
}

export function makeMail(): string {
  const latin1 = Buffer.from('Grüße aus Köln! Ça coûte 5 € — déjà vu, naïve façade.\n'.repeat(400), 'latin1').toString('latin1');
  const cp1252Text = '<p>Smart “quotes” – dashes… and the euro € in windows-1252, ©2026.</p>\n'.repeat(500);
  // windows-1252 bytes for the characters above.
  const map: Record<string, number> = { '“': 0x93, '”': 0x94, '–': 0x96, '…': 0x85, '€': 0x80, '©': 0xa9 };
  const cp1252 = Array.from(cp1252Text, (ch) => String.fromCharCode(map[ch] ?? ch.charCodeAt(0))).join('');
  // KOI8-R for a line of Russian: 'Привет, мир' encoded by hand (KOI8-R codes).
  const koi8 = String.fromCharCode(0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4, 0x2c, 0x20, 0xcd, 0xc9, 0xd2, 0x0a).repeat(2000);
  const forwarded = [
    'From: "Ünal" <unal@example.org>',
    'To: team@example.org',
    'Subject: =?utf-8?B?' + Buffer.from('Weitergeleitet: Bericht über Q3').toString('base64') + '?=',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 8bit',
    '',
    Buffer.from('Hallo zusammen, anbei der Bericht. Schöne Grüße\r\n'.repeat(200), 'utf8').toString('latin1'),
  ].join('\r\n');
  const parts = [
    'From: =?iso-8859-2?Q?Zden=ECk_Nov=E1k?= <zdenek@example.cz>',
    'To: "Ops" <ops@example.com>, =?utf-8?B?' + Buffer.from('Jürgen Groß').toString('base64') + '?= <jg@example.de>',
    'Cc: audit@example.com',
    'Subject: =?iso-8859-2?B?' + Buffer.from([0x50, 0xf8, 0xed, 0x6c, 0x6f, 0x68, 0x79]).toString('base64') + '?= =?utf-8?Q?_und_Ber=C3=BCchte?=',
    'Date: Thu, 1 Oct 2026 10:00:00 +0200',
    'Message-ID: <bench-3mb@example.cz>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="mixed-b"',
    '',
    '--mixed-b',
    'Content-Type: multipart/alternative; boundary="alt-b"',
    '',
    '--alt-b',
    'Content-Type: text/plain; charset=iso-8859-1',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    qp(latin1),
    '--alt-b',
    'Content-Type: text/html; charset=windows-1252',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    qp(cp1252),
    '--alt-b--',
    '--mixed-b',
    'Content-Type: text/plain; charset=koi8-r; name="privet.txt"',
    'Content-Disposition: attachment; filename="privet.txt"',
    'Content-Transfer-Encoding: base64',
    '',
    wrap(Buffer.from(koi8, 'latin1').toString('base64')),
    '--mixed-b',
    'Content-Type: message/rfc822',
    'Content-Disposition: inline',
    '',
    forwarded,
  ];
  const sizes = [1_400_000, 700_000, 40_000, 12_000];
  sizes.forEach((n, i) => {
    parts.push('--mixed-b', `Content-Type: application/octet-stream; name="blob${i}.bin"`, `Content-Disposition: attachment; filename*=utf-8''${encodeURIComponent(`Anlage-${i}-größe.bin`)}`, 'Content-Transfer-Encoding: base64', '', wrap(pseudoBytes(n, i + 1).toString('base64')));
  });
  parts.push('--mixed-b', 'Content-Type: image/png; name="logo.png"', 'Content-ID: <logo@bench>', 'Content-Transfer-Encoding: base64', '', wrap(pseudoBytes(60_000, 99).toString('base64')));
  parts.push('--mixed-b--', '');
  return parts.join('\r\n');
}
