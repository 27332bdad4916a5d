/**
 * A component twin built with WASI (componentize-qjs without stubWasi imports wasi:clocks,
 * wasi:random, wasi:cli, wasi:io, wasi:filesystem): it answers what its language's own clock
 * and randomness say, which the host's stubs must make the call's instant and the world's
 * seeded sequence.
 */
export function manifest() {
  return {
    vendor: 'clock',
    version: '0.1.0',
    protocol: 'http',
    models: { hosts: ['api.clock.test'], resources: [], endpointEnv: [] },
    requestScopes: [],
    routes: [{ name: 'now', match: { methods: ['GET'], path: '/v1/now', query: [], headers: [], body: [] } }],
    stores: [],
    moves: [],
    scenarios: false,
  };
}

export function invoke(context) {
  const body = { date_now: Date.now(), new_date: new Date().toISOString(), context_now: Number(context.nowMs) };
  return { response: { status: 200, headers: [], body: JSON.stringify(body) }, writes: [], events: [] };
}
