/**
 * The request report (`GET …/requests?hours=`): per twin, requests by status class,
 * p50 and p95 response time, and top routes, over the last hours.
 *
 * Kept in memory as a bounded ring per twin: it describes traffic since the world
 * started serving, not its whole life, and never slows a request with a write.
 */

interface Sample {
  at: number;
  status: number;
  ms: number;
  route: string;
}

export interface TwinRequestReport {
  twin: string;
  total: number;
  byStatusClass: Record<string, number>;
  p50Ms: number | null;
  p95Ms: number | null;
  topRoutes: { route: string; count: number }[];
}

export interface RequestReport {
  since: string;
  hours: number;
  twins: TwinRequestReport[];
}

const DEFAULT_CAPACITY = 50_000;

class Ring {
  private readonly items: (Sample | undefined)[];
  private next = 0;
  constructor(readonly capacity: number) {
    this.items = new Array(capacity);
  }
  push(s: Sample): void {
    this.items[this.next] = s;
    this.next = (this.next + 1) % this.capacity;
  }
  *since(at: number): Iterable<Sample> {
    for (const s of this.items) if (s && s.at >= at) yield s;
  }
}

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return Math.round(sorted[Math.max(0, i)]! * 1000) / 1000;
}

export class RequestLog {
  private readonly rings = new Map<string, Ring>();
  constructor(private readonly capacity = DEFAULT_CAPACITY) {}

  record(twin: string, at: number, status: number, ms: number, route: string): void {
    let ring = this.rings.get(twin);
    if (!ring) this.rings.set(twin, (ring = new Ring(this.capacity)));
    ring.push({ at, status, ms, route });
  }

  report(twins: string[], hours: number, now: number): RequestReport {
    const since = now - hours * 3_600_000;
    return {
      since: new Date(since).toISOString(),
      hours,
      twins: twins.map((twin) => {
        const samples = [...(this.rings.get(twin)?.since(since) ?? [])];
        const byStatusClass: Record<string, number> = { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
        const routes = new Map<string, number>();
        for (const s of samples) {
          const cls = `${Math.floor(s.status / 100)}xx`;
          byStatusClass[cls] = (byStatusClass[cls] ?? 0) + 1;
          routes.set(s.route, (routes.get(s.route) ?? 0) + 1);
        }
        const times = samples.map((s) => s.ms).sort((a, b) => a - b);
        const topRoutes = [...routes]
          .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
          .slice(0, 10)
          .map(([route, count]) => ({ route, count }));
        return { twin, total: samples.length, byStatusClass, p50Ms: percentile(times, 50), p95Ms: percentile(times, 95), topRoutes };
      }),
    };
  }
}
