/**
 * A runaway component twin: `spin` never returns (the lane's watchdog must end it, and only
 * it), `hog` allocates until its capped memory runs out; `ok` answers.
 */

function manifestRoute(name, method, path) {
  return { name, match: { methods: [method], path, query: [], headers: [], body: [] } };
}

export function manifest() {
  return {
    vendor: 'loop',
    version: '0.1.0',
    protocol: 'http',
    models: { hosts: ['api.loop.test'], resources: [], endpointEnv: [] },
    requestScopes: [],
    routes: [manifestRoute('spin', 'POST', '/v1/spin'), manifestRoute('ok', 'GET', '/v1/ok'), manifestRoute('hog', 'POST', '/v1/hog')],
    stores: [],
    moves: [],
    scenarios: false,
  };
}

export function invoke(context, invocation) {
  if (invocation.tag === 'route' && invocation.val.index === 0) for (;;);
  if (invocation.tag === 'route' && invocation.val.index === 2) {
    const kept = [];
    for (;;) kept.push(new Array(1 << 16).fill(kept.length));
  }
  return { response: { status: 200, headers: [], body: JSON.stringify({ ok: true, position: Number(context.position) }) }, writes: [], events: [] };
}
