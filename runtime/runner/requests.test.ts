import { describe, expect, it } from 'vitest';
import { RequestLog } from './requests.js';

describe('RequestLog', () => {
  it('keeps the last `capacity` samples per twin, and a snapshot gives them back oldest first', () => {
    const log = new RequestLog(3);
    for (let i = 1; i <= 5; i++) log.record('stripe', 1000 + i, i === 4 ? 500 : 200, i, `GET /r${i}`);
    log.record('hello', 2000, 404, 1, 'GET /x');
    const report = log.report(['stripe', 'hello'], 1, 2000);
    expect(report.twins.map((t) => [t.twin, t.total, t.byStatusClass['2xx'], t.byStatusClass['5xx']])).toEqual([['stripe', 3, 2, 1], ['hello', 1, 0, 0]]);
    const snapshot = log.snapshot();
    expect(snapshot).toEqual([
      ['stripe', [[1003, 200, 3, 'GET /r3'], [1004, 500, 4, 'GET /r4'], [1005, 200, 5, 'GET /r5']]],
      ['hello', [[2000, 404, 1, 'GET /x']]],
    ]);
    const again = new RequestLog(3);
    again.restore(snapshot);
    again.restore([['stripe', [['bad'], [1, 2]]], 'junk', null]);
    expect(again.report(['stripe', 'hello'], 1, 2000)).toEqual(report);
  });
});
