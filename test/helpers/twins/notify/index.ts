/**
 * A twin for tests of outbound webhooks: `POST /v1/notify` emits the `webhook.delivery` its
 * JSON body describes (`{ id, url, headers, body, sign? }`), as a twin with webhooks does for
 * an event of its own.
 */
import { defineTwin } from '../../../../sdk/twin/index.js';

export default defineTwin({
  vendor: 'notify',
  version: '1.0.0',
  protocol: 'http',
  models: { hosts: [], resources: [] },
  routes: [
    {
      name: 'notify',
      match: { method: 'POST', path: '/v1/notify' },
      handle: (request, ctx) => {
        ctx.emit('webhook.delivery', request.body);
        return { status: 200, body: { queued: true } };
      },
    },
  ],
});
