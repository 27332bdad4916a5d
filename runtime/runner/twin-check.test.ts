/**
 * A twin the host does not trust answers its manifest in the sandbox, and what it answers is
 * checked before anything serves it: each refusal names the twin and the field.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { loadBuiltinTwins } from '../../sdk/twin/build.js';
import { KitError } from '../errors.js';
import { nodeGuestEngines } from './index.js';
import { checkUntrustedTwin } from './twin-check.js';

const lane = nodeGuestEngines.lane({ name: 'twin-check test' });
afterAll(() => lane.close());

/** A hand-written twin script answering `manifest` (a guest can answer anything). */
function script(manifest: unknown): string {
  return `globalThis.__kit_manifest = () => ${JSON.stringify(JSON.stringify(manifest))}; globalThis.__kit_invoke = () => '{}';`;
}

const BASE = {
  vendor: 'acme',
  version: '1.0.0',
  protocol: 'http',
  models: { hosts: ['api.acme.test'], resources: ['widget'] },
  requestScopes: [],
  routes: [{ name: 'widgets.list', match: { method: 'GET', path: '/v1/widgets' } }],
  stores: [],
  moves: [],
  scenarios: true,
};

async function refusal(source: string, served: string[] = []): Promise<KitError> {
  const error = await checkUntrustedTwin(lane, source, { label: 'twins/acme', served }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(KitError);
  expect((error as KitError).code).toBe('invalid_twin');
  expect((error as KitError).message).toMatch(/^twins\/acme:/);
  return error as KitError;
}

describe('checkUntrustedTwin', () => {
  it('reads each built-in twin in QuickJS as its builder read it in V8', async () => {
    for (const twin of (await loadBuiltinTwins()).values()) {
      const manifest = await checkUntrustedTwin(lane, twin.source, { label: twin.vendor });
      expect(manifest).toEqual(twin.manifest);
    }
  });

  it('refuses a script that loops while it loads, and the lane serves the next twin', async () => {
    const error = await refusal('for (;;) {}');
    expect(error.message).toMatch(/failed to load/);
    expect((await checkUntrustedTwin(lane, script(BASE), { label: 'next' })).vendor).toBe('acme');
  });

  it('refuses a script that allocates without end while it loads', async () => {
    const error = await refusal('const a = []; for (;;) a.push("x".repeat(1 << 20) + a.length);');
    expect(error.message).toMatch(/failed to load/);
  });

  it('refuses a script that defines no twin', async () => {
    expect((await refusal('const x = 1;')).message).toMatch(/exports no twin/);
    expect((await refusal('   ')).message).toMatch(/is empty/);
  });

  it('names the field of a manifest it refuses', async () => {
    const cases: [unknown, string][] = [
      [{ ...BASE, vendor: 'Acme!' }, 'vendor'],
      [{ ...BASE, models: { hosts: 'x', resources: [] } }, 'models.hosts'],
      [{ ...BASE, routes: [{ name: 'a', match: { path: 'v1' } }] }, 'routes[0].match.path'],
      [{ ...BASE, stores: ['../up'] }, 'stores[0]'],
      [{ ...BASE, requestScopes: ['write'] }, 'requestScopes'],
      [{ ...BASE, root: { ingest: 'paypal' } }, 'root.ingest'],
      ['not an object', ''],
    ];
    for (const [manifest, field] of cases) {
      expect((await refusal(script(manifest))).details).toEqual({ label: 'twins/acme', field });
    }
  });

  it('refuses a route that an earlier one always takes first, and lets a narrower earlier one be', async () => {
    const clash = {
      ...BASE,
      routes: [
        { name: 'widgets.get', match: { method: ['GET', 'HEAD'], path: '/v1/widgets/:id' } },
        { name: 'widgets.show', match: { method: 'GET', path: '/v1/widgets/:key', query: { expand: true } } },
      ],
    };
    const error = await refusal(script(clash));
    expect(error.details).toEqual({ label: 'twins/acme', field: 'routes[1]' });
    expect(error.message).toMatch(/'widgets.show'.*clashes with routes\[0\] \('widgets.get'\)/);
    const narrowerFirst = { ...clash, routes: [...clash.routes].reverse() };
    expect((await checkUntrustedTwin(lane, script(narrowerFirst), { label: 'ok' })).routes).toHaveLength(2);
  });

  it("refuses a vendor id already served beside it", async () => {
    const error = await refusal(script(BASE), ['stripe', 'acme']);
    expect(error.details).toEqual({ label: 'twins/acme', field: 'vendor' });
    expect(error.message).toMatch(/already served/);
  });
});
