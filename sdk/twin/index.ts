/**
 * The twin author's API: `defineTwin()` and the types handlers are written against.
 * Everything here also runs inside the sandbox, so it imports nothing of Node. The Node-side
 * tools (the twin build, the guest harness for tests) are in `./node.ts`.
 */
export { copyJson } from './copy.js';
export { defineTwin } from './define.js';
export { parseForm, parseQuery, decodeFormComponent, FormError } from './form.js';
export type { FormErrorCode, FormLimits } from './form.js';
export { readGuestOutput } from './protocol.js';
export { LONG_ID_UNITS, storableId, toStorableId } from './storable.js';
export type { GuestEvent, GuestOutput, GuestOutputResult, GuestRecordWrite } from './protocol.js';
export type {
  Handler,
  HttpMethod,
  ListOptions,
  ListPage,
  Matcher,
  Move,
  PutOptions,
  ReadTree,
  Route,
  Store,
  StreamAnswer,
  StreamConnection,
  StreamHandler,
  StreamUntil,
  Tree,
  TwinContext,
  TwinDefinition,
  TwinRequest,
  TwinResponse,
} from './types.js';
