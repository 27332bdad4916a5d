import { describe, expect, it } from 'vitest';
import { formatInstant, parseDuration, parseInstant } from './time.js';

const code = (f: () => unknown): string | undefined => {
  try { f(); } catch (e) { return (e as { code?: string }).code; }
  return undefined;
};

describe('parseInstant', () => {
  it('reads Z, offsets and fractions to the same epoch milliseconds', () => {
    const base = Date.UTC(2026, 0, 1, 0, 0, 0);
    expect(parseInstant('2026-01-01T00:00:00Z')).toBe(base);
    expect(parseInstant('2026-01-01T00:00:00.000Z')).toBe(base);
    expect(parseInstant('2026-01-01T01:00:00+01:00')).toBe(base);
    expect(parseInstant('2025-12-31T19:30:00-04:30')).toBe(base);
    expect(parseInstant('2026-01-01T01:00:00+0100')).toBe(base);
    expect(parseInstant('2026-01-01T00:00Z')).toBe(base);
    expect(parseInstant('2026-01-01T00:00:00.5Z')).toBe(base + 500);
    expect(parseInstant('2026-01-01T00:00:00.123456789Z')).toBe(base + 123);
  });

  it('refuses garbage, missing zones and impossible dates with invalid_instant', () => {
    for (const bad of ['', 'now', '2026-01-01', '2026-01-01T00:00:00', '2026-02-30T00:00:00Z', '2026-13-01T00:00:00Z',
      '2026-01-01T24:00:00Z', '2026-01-01T00:60:00Z', '2026-01-01T00:00:00+25:00', '1969-12-31T23:59:59Z',
      '2026-01-01T00:00:00Z ', '+012026-01-01T00:00:00Z', 'x'.repeat(1000)]) {
      expect(code(() => parseInstant(bad)), bad).toBe('invalid_instant');
    }
    expect(code(() => parseInstant(12345))).toBe('invalid_instant');
    expect(code(() => parseInstant(null))).toBe('invalid_instant');
  });

  it('formats with toISOString', () => {
    expect(formatInstant(parseInstant('2026-03-04T05:06:07+02:00'))).toBe('2026-03-04T03:06:07.000Z');
  });
});

describe('parseDuration', () => {
  it('reads s, m, h, d', () => {
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('7d')).toBe(604_800_000);
  });

  it('refuses zero, negatives, fractions, other units and garbage with invalid_duration', () => {
    for (const bad of ['0s', '-1d', '1.5h', '10w', 'd', '10', ' 1d', '01d', '1D', '99999999999999d']) {
      expect(code(() => parseDuration(bad)), bad).toBe('invalid_duration');
    }
    expect(code(() => parseDuration(5))).toBe('invalid_duration');
  });
});
