/**
 * The README's mailbox table is the twin's coverage table: every route it names is registered
 * under that name with that method and path, and every registered route is in it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildTwin } from '../../../sdk/twin/build.js';

describe('smtp coverage', () => {
  it('registers exactly the routes the README lists', async () => {
    const twin = await buildTwin(fileURLToPath(new URL('../twin/index.ts', import.meta.url)));
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const rows = [...readme.matchAll(/^\| `([a-z]+\.[a-z]+)` \| `([A-Z]+) ([^`?]+)(?:\?[^`]*)?` \|/gm)].map((m) => `${m[1]} ${m[2]} ${m[3]}`);
    const routes = twin.manifest.routes.map((r) => `${r.name} ${String(r.match.method)} ${r.match.path}`);
    expect(rows.sort()).toEqual(routes.sort());
    expect(twin.manifest).toMatchObject({ vendor: 'smtp', protocol: 'smtp', stream: true, models: { endpointEnv: ['SMTP_HOST', 'SMTP_PORT'] } });
  });
});
