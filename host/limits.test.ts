import { describe, expect, it } from 'vitest';
import { RequestBudget, retryAfterSeconds } from './limits.js';

describe('RequestBudget', () => {
  it('lets a whole window pass as a burst, then refills at size per window', () => {
    let now = 0;
    const b = new RequestBudget({ size: 100, windowMs: 1000, now: () => now });
    for (let i = 0; i < 100; i++) expect(b.take()).toBe(0);
    expect(b.take()).toBe(10);
    now += 10;
    expect(b.take()).toBe(0);
    expect(b.take()).toBe(10);
    now += 5000;
    // Refill is capped at the size.
    for (let i = 0; i < 100; i++) expect(b.take()).toBe(0);
    expect(b.take()).toBeGreaterThan(0);
  });

  it('does not drain or refill when the clock steps back', () => {
    let now = 10_000;
    const b = new RequestBudget({ size: 2, windowMs: 1000, now: () => now });
    b.take();
    b.take();
    now = 0;
    expect(b.take()).toBe(500);
    now = 500;
    expect(b.take()).toBe(500);
    now = 10_500;
    expect(b.take()).toBe(0);
  });

  it('has a generous default and refuses nonsense settings', () => {
    const b = new RequestBudget();
    expect([b.size, b.windowMs]).toEqual([100_000, 10_000]);
    expect(() => new RequestBudget({ size: 0 })).toThrow(TypeError);
    expect(() => new RequestBudget({ windowMs: -1 })).toThrow(TypeError);
    expect(() => new RequestBudget({ size: Number.NaN })).toThrow(TypeError);
  });

  it('rounds Retry-After up to whole seconds, at least 1', () => {
    expect([retryAfterSeconds(1), retryAfterSeconds(1000), retryAfterSeconds(1001)]).toEqual([1, 1, 2]);
  });
});
