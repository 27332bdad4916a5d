import { describe, expect, it } from 'vitest';
import { describeCause, describeWrites, keyValues, printable, table } from './format.js';

describe('what the CLI prints of a server answer', () => {
  it('escapes control characters, so an answer cannot move the cursor or recolour the terminal', () => {
    expect(printable('cus_\x1b[2J\x1b[31mred\r\nnext\u2028')).toBe('cus_\\x1b[2J\\x1b[31mred\\x0d\\x0anext\\x2028');
    expect(printable(null)).toBe('-');
    const rows = table(['id'], [['a\x07b']]);
    expect(rows).toEqual(['ID', 'a\\x07b']);
  });

  it('aligns columns two spaces apart, the last one unpadded', () => {
    expect(table(['twin', 'position', 'view'], [['hello', 1, 'w@hello:1'], ['stripe', 12, 'w@stripe:12']])).toEqual([
      'TWIN    POSITION  VIEW',
      'hello   1         w@hello:1',
      'stripe  12        w@stripe:12',
    ]);
    expect(keyValues([['at', 'x'], ['frozen', 'yes']])).toEqual(['at      x', 'frozen  yes']);
  });

  it('tells an entry by its cause and the records it wrote', () => {
    expect(describeCause({ cause: { kind: 'request', method: 'POST', path: '/stripe/v1/customers', status: 200 } })).toBe('POST /stripe/v1/customers 200');
    expect(describeCause({ cause: { kind: 'move', move: 'renewal' } })).toBe('move renewal');
    expect(describeCause({ cause: { kind: 'push', changeset: 'cs-1', change: 2, method: 'POST', path: '/v1/prices' } })).toBe('push cs-1#2 POST /v1/prices');
    expect(describeCause({ cause: { kind: 'pull', origin: 'https://h/acme/main', merged: true } })).toBe('pull https://h/acme/main (merged)');
    const writes = [1, 2, 3, 4, 5].map((i) => ({ type: 'customer', id: `c${i}`, value: i === 2 ? null : {} }));
    expect(describeWrites({ writes })).toBe('customer c1, customer c2 (deleted), customer c3 (+2 more)');
    expect(describeWrites({ writes: [] })).toBe('-');
  });
});
