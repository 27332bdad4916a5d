/**
 * The kitvendor twin's entry: the manifest fields and the route table, nothing else. The build
 * (`kit twin build`, `kit twin test`, a world that serves it) bundles this file and what it
 * imports into one sandbox script. It may import `twinkit/twin`, npm libraries and files of
 * this folder; no Node module (the sandbox has none).
 */
import { defineTwin } from 'twinkit/twin';
import { failureBody } from './errors.js';
import { activateWidget, createWidget, deleteWidget, listWidgets, retrieveWidget, updateWidget } from './resources/widgets.js';
import { widgetsStore } from './stores.js';

export default defineTwin({
  vendor: 'kitvendor',
  version: '0.1.0',
  protocol: 'http',
  models: {
    // The vendor's API hosts: an app attached to a world reaches this twin there.
    hosts: ['api.kitvendor.test'],
    resources: ['widget'],
    // The variable an app reads its API base URL from, set to the twin's URL by `kit world attach`.
    endpointEnv: ['KITVENDOR_API_URL'],
  },
  // Route names are stable: the log, reports and coverage.ts name routes by them.
  routes: [
    { name: 'widgets.create', match: { method: 'POST', path: '/v1/widgets' }, handle: createWidget },
    { name: 'widgets.list', match: { method: 'GET', path: '/v1/widgets' }, handle: listWidgets },
    { name: 'widgets.retrieve', match: { method: 'GET', path: '/v1/widgets/:id' }, handle: retrieveWidget },
    { name: 'widgets.update', match: { method: 'POST', path: '/v1/widgets/:id' }, handle: updateWidget },
    { name: 'widgets.delete', match: { method: 'DELETE', path: '/v1/widgets/:id' }, handle: deleteWidget },
  ],
  moves: { activate: activateWidget },
  stores: { widgets: widgetsStore },
  errorBody: failureBody,
});
