/**
 * The hello twin: a tiny vendor with one resource, written the way every twin is.
 * This file is the twin's entry: the build bundles it (and everything it imports) into one
 * sandbox script. It may import only `sdk/twin/` and files of this folder.
 */
import { defineTwin } from '../../../sdk/twin/index.js';
import { failureBody } from './errors.js';
import {
  createGreeting,
  deleteGreeting,
  expireGreeting,
  listGreetings,
  retrieveGreeting,
  searchGreetings,
  updateGreeting,
} from './resources/greetings.js';
import { greetingsStore } from './stores.js';

export default defineTwin({
  vendor: 'hello',
  version: '1.0.0',
  protocol: 'http',
  models: {
    hosts: ['api.hello.test'],
    resources: ['greeting'],
    endpointEnv: ['HELLO_API_URL'],
  },
  routes: [
    { name: 'greetings.create', match: { method: 'POST', path: '/v1/greetings' }, handle: createGreeting },
    { name: 'greetings.list', match: { method: 'GET', path: '/v1/greetings' }, handle: listGreetings },
    { name: 'greetings.retrieve', match: { method: 'GET', path: '/v1/greetings/:id' }, handle: retrieveGreeting },
    // Declared after `:id` on purpose: a literal segment wins over a parameter whatever the order.
    { name: 'greetings.search', match: { method: 'GET', path: '/v1/greetings/search' }, handle: searchGreetings },
    { name: 'greetings.update', match: { method: ['POST', 'PATCH'], path: '/v1/greetings/:id' }, handle: updateGreeting },
    { name: 'greetings.delete', match: { method: 'DELETE', path: '/v1/greetings/:id' }, handle: deleteGreeting },
  ],
  moves: { expire: expireGreeting },
  stores: { greetings: greetingsStore },
  errorBody: failureBody,
});
