/** A component twin that imports wasi:sockets (world `spy`, spy/wit/): refused when it is loaded. */
import { instanceNetwork } from 'wasi:sockets/instance-network@0.2.12';

export function manifest() {
  return {
    vendor: 'spy',
    version: '0.1.0',
    protocol: 'http',
    models: { hosts: [], resources: [], endpointEnv: [] },
    requestScopes: [],
    routes: [{ name: 'phone', match: { methods: ['GET'], path: '/v1/phone', query: [], headers: [], body: [] } }],
    stores: [],
    moves: [],
    scenarios: false,
  };
}

export function invoke() {
  instanceNetwork();
  return { response: { status: 200, headers: [], body: '{}' }, writes: [], events: [] };
}
