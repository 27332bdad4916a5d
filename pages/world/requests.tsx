/** The request report: per twin, its requests by status class, response times, and top routes, over the last hours. */
import { useState } from 'preact/hooks';
import { Badge, Card, Empty, ErrorNote, Loading, count, useLoad } from '../ui/index.js';
import type { TwinRequestReport } from '../ui/index.js';
import type { SectionProps } from './api.js';

const PERIODS = [1, 24, 24 * 7, 24 * 30];

function ms(value: number | null): string {
  return value === null ? '—' : `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`;
}

function TwinReport({ report }: { report: TwinRequestReport }) {
  const classes = Object.entries(report.byStatusClass).filter(([, n]) => n > 0);
  return (
    <section class="twin-report" aria-label={`Requests of ${report.twin}`}>
      <h3 class="mono">{report.twin}</h3>
      <div class="stats">
        <div class="stat">
          <span class="stat-value">{count(report.total)}</span>
          <span class="stat-label">requests</span>
        </div>
        <div class="stat">
          <span class="stat-value">{ms(report.p50Ms)}</span>
          <span class="stat-label">p50</span>
        </div>
        <div class="stat">
          <span class="stat-value">{ms(report.p95Ms)}</span>
          <span class="stat-label">p95</span>
        </div>
        <div class="stat">
          <span class="stat-value">
            {classes.length === 0
              ? '—'
              : classes.map(([cls, n]) => (
                  <Badge key={cls} tone={cls === '2xx' ? 'green' : cls === '4xx' ? 'amber' : cls === '5xx' ? 'red' : 'blue'}>
                    {cls} {count(n)}
                  </Badge>
                ))}
          </span>
          <span class="stat-label">by status</span>
        </div>
      </div>
      {report.topRoutes.length > 0 && (
        <table class="data compact" aria-label={`Top routes of ${report.twin}`}>
          <thead>
            <tr>
              <th>Route</th>
              <th class="num">Requests</th>
            </tr>
          </thead>
          <tbody>
            {report.topRoutes.map((r) => (
              <tr key={r.route}>
                <td class="mono">{r.route}</td>
                <td class="num">{count(r.count)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function RequestsSection({ api }: SectionProps) {
  const [hours, setHours] = useState(24);
  const report = useLoad(() => api.requests(hours), [api, hours]);
  return (
    <Card
      title="Requests"
      actions={
        <>
          <label>
            Over the last{' '}
            <select name="hours" value={String(hours)} onChange={(e) => setHours(Number(e.currentTarget.value))}>
              {PERIODS.map((h) => (
                <option key={h} value={String(h)}>
                  {h < 24 ? `${h} hour` : h === 24 ? '24 hours' : `${h / 24} days`}
                </option>
              ))}
            </select>
          </label>
          <button type="button" onClick={report.reload}>
            Refresh
          </button>
        </>
      }
    >
      <ErrorNote error={report.error} what="The request report could not be read" />
      {report.data === null ? (
        report.error === null && <Loading what="the report" />
      ) : report.data.twins.every((t) => t.total === 0) ? (
        <Empty title="No requests in this period." hint="Requests your app sends to the twins are counted here." />
      ) : (
        report.data.twins.map((t) => <TwinReport key={t.twin} report={t} />)
      )}
    </Card>
  );
}
