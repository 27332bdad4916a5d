/**
 * The vendor's endpoints and whether this twin serves them. `test/coverage.test.ts` keeps it
 * true against the routes the twin declares: every route is a row (implemented or twin-only)
 * under its own name, method and path, and every implemented row has its route. List the
 * vendor's endpoints you have not written yet as `planned`.
 */

export interface CoverageRow {
  /** The route name in the twin (`twin/index.ts`). */
  name: string;
  method: string;
  path: string;
  status: 'implemented' | 'planned' | 'twin-only';
  note?: string;
}

export const coverage: CoverageRow[] = [
  { name: 'widgets.create', method: 'POST', path: '/v1/widgets', status: 'implemented' },
  { name: 'widgets.list', method: 'GET', path: '/v1/widgets', status: 'implemented' },
  { name: 'widgets.retrieve', method: 'GET', path: '/v1/widgets/:id', status: 'implemented' },
  { name: 'widgets.update', method: 'POST', path: '/v1/widgets/:id', status: 'implemented' },
  { name: 'widgets.delete', method: 'DELETE', path: '/v1/widgets/:id', status: 'implemented' },
  { name: 'widgets.search', method: 'GET', path: '/v1/widgets/search', status: 'planned', note: 'an example of a row not served yet' },
];
