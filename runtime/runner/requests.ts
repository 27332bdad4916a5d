/**
 * The request report (`GET …/requests?hours=`): per twin, requests by status class,
 * p50 and p95 response time, and top routes, over the last hours.
 *
 * Kept in memory as a bounded ring per twin, so it never slows a request with a write; the
 * runner keeps it in storage when the world closes and reads it back when it opens again
 * (`snapshot`, `restore`), so a host closing an idle world, or a restart, loses none of it.
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

/** The last `capacity` samples; grows as they come, so a world that saw few requests holds few. */
class Ring {
  private readonly items: Sample[] = [];
  private next = 0;
  constructor(readonly capacity: number) {}
  /** Oldest first. */
  *all(): Iterable<Sample> {
    const n = this.items.length;
    for (let i = 0; i < n; i++) yield this.items[(this.next + i) % n]!;
  }
  push(s: Sample): void {
    if (this.items.length < this.capacity) {
      this.items.push(s);
      return;
    }
    this.items[this.next] = s;
    this.next = (this.next + 1) % this.capacity;
  }
  *since(at: number): Iterable<Sample> {
    for (const s of this.items) if (s.at >= at) yield s;
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

  /** Every sample, per twin oldest first, as plain data for storage: `[twin, [at, status, ms, route][]][]`. */
  snapshot(): [string, [number, number, number, string][]][] {
    return [...this.rings].map(([twin, ring]) => [twin, [...ring.all()].map((s) => [s.at, s.status, s.ms, s.route] as [number, number, number, string])]);
  }

  /** Takes back a `snapshot` (anything malformed in it is skipped). */
  restore(snapshot: unknown): void {
    if (!Array.isArray(snapshot)) return;
    for (const item of snapshot) {
      if (!Array.isArray(item) || typeof item[0] !== 'string' || !Array.isArray(item[1])) continue;
      for (const s of item[1] as unknown[]) {
        if (!Array.isArray(s) || typeof s[0] !== 'number' || typeof s[1] !== 'number' || typeof s[2] !== 'number' || typeof s[3] !== 'string') continue;
        this.record(item[0], s[0], s[1], s[2], s[3]);
      }
    }
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
