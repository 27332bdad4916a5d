/**
 * The twins a runner serves: each twin's bundle loaded into the world's sandbox, its
 * routes compiled for the host-side router, and the one host function its guest code
 * reads the tree through.
 */
import { redactorOf } from './secrets.js';
import type { CallResult, GuestEngine, HostCall, HostValue } from '../sandbox/index.js';
import { compileRouter, type CompiledRouter } from '../router/index.js';
import { KitError } from '../errors.js';
import type { World } from '../world/index.js';
import type { EmittedEvent, RecordWrite } from '../world/types.js';
import { checkEvents, checkResponse, checkWrites, readGuestOutput, type GuestResponse } from '../../sdk/twin/protocol.js';
import type { TwinBundle, TwinManifestJson } from './types.js';

/** What `__kit_invoke` answers. */
export interface GuestOutput {
  response?: GuestResponse;
  writes: RecordWrite[];
  events: EmittedEvent[];
  thrown?: { message: string; stack?: string };
}

export interface ServedTwin {
  vendor: string;
  manifest: TwinManifestJson;
  bundle: TwinBundle;
  router: CompiledRouter<number>;
  readScoped: boolean;
  /** Hides the twin's secrets from a caller that may only read (runner/secrets.ts); undefined when it names none. */
  redact: ((type: string, value: unknown) => unknown) | undefined;
}

export function serveTwin(bundle: TwinBundle): ServedTwin {
  const manifest = bundle.manifest;
  return {
    vendor: bundle.vendor,
    manifest,
    bundle,
    router: compileRouter(manifest.routes.map((r, i) => ({ name: r.name, match: r.match, value: i }))),
    readScoped: manifest.requestScopes.includes('read'),
    redact: redactorOf(manifest.secrets),
  };
}

/** Tree reads for guests (`get`, `list`, `count`) at the twin's head. Arguments are guest data: checked. */
function treeRead(world: World, twin: string, op: string, arg: Record<string, unknown>): unknown {
  const type = arg['type'];
  if (typeof type !== 'string') throw new TypeError('type must be a string');
  switch (op) {
    case 'get': {
      const id = arg['id'];
      if (typeof id !== 'string') throw new TypeError('id must be a string');
      return world.getRecord(twin, type, id) ?? null;
    }
    case 'list': {
      const options: { after?: string; before?: string; limit?: number; reverse?: boolean } = {};
      if (typeof arg['after'] === 'string') options.after = arg['after'];
      if (typeof arg['before'] === 'string') options.before = arg['before'];
      if (typeof arg['limit'] === 'number') options.limit = arg['limit'];
      if (arg['reverse'] === true) options.reverse = true;
      const page = world.listRecords(twin, type, options);
      return { items: page.records, hasMore: page.hasMore };
    }
    case 'count':
      return world.countRecords(twin, type);
    default:
      throw new TypeError(`unknown host call '${op}'`);
  }
}

/** `__host_call`: tree reads as JSON text, for any engine. */
export function treeHostCall(world: World, twin: string): HostCall {
  return (op, argJson) => JSON.stringify(treeRead(world, twin, op, JSON.parse(argJson) as Record<string, unknown>));
}

/**
 * `__host_value`: the same reads as values, for an engine whose guests share this heap. Each
 * read is a fresh object from storage, so a guest changing one changes nothing else.
 */
export function treeHostValue(world: World, twin: string): HostValue {
  return (op, arg) => treeRead(world, twin, op, arg);
}

/**
 * Calls `__kit_invoke` in a context; a sandbox failure (timeout, memory) becomes a KitError.
 * `rawBody`: a JSON response body stays text (`response.bodyJson`), for answers sent on as they are.
 */
export function invokeGuest(
  sandbox: GuestEngine,
  context: string,
  input: object,
  hostCall: HostCall,
  options?: { rawBody?: boolean; hostValue?: HostValue },
): GuestOutput {
  // An engine that shares this heap takes the input and answers reads as values (no JSON both ways).
  const result =
    sandbox.callValue !== undefined && options?.hostValue !== undefined
      ? sandbox.callValue(context, '__kit_invoke', input, hostCall, options.hostValue)
      : sandbox.call(context, '__kit_invoke', JSON.stringify(input), hostCall);
  return guestOutputOf(result, options);
}

/**
 * What a call of `__kit_invoke` answered, checked: a sandbox failure (timeout, memory) becomes a
 * KitError, and so does an answer the guest runtime would not have made.
 */
export function guestOutputOf(result: CallResult, options?: { rawBody?: boolean }): GuestOutput {
  if ('error' in result) {
    const { code, message } = result.error;
    if (code === 'timeout') throw new KitError('handler_timeout', `The handler ran past its budget: ${message}`);
    if (code === 'out_of_memory') throw new KitError('handler_out_of_memory', `The handler ran out of memory: ${message}`);
    if (code === 'disposed') throw new KitError('sandbox_crashed', 'The world sandbox was restarted; try again.');
    throw new KitError('handler_error', message);
  }
  // Guest code can redefine `__kit_invoke`: check the answer before believing its writes.
  const out = readGuestOutput(result.ok, options);
  if ('error' in out) throw malformed(out.error);
  // A trusted context's response crosses as a value (the host's copy), its JSON body as text beside it.
  if (result.response !== undefined) {
    if (out.ok.response !== undefined) throw malformed('a response both in its text and as a value');
    if (result.body !== undefined && typeof result.body !== 'string') throw malformed('a response body that is not JSON text');
    const response = checkResponse(result.response, result.body, options);
    if ('error' in response) throw malformed(response.error);
    if (result.body !== undefined && response.ok.body === undefined && response.ok.bodyJson === undefined) throw malformed('a body beside a response that has none');
    out.ok.response = response.ok;
  }
  // A trusted context's writes and events cross as values, copied into this realm by `__host_copy`.
  if (result.writes !== undefined || result.events !== undefined) {
    const writes = checkWrites(result.writes);
    if ('error' in writes) throw malformed(writes.error);
    const events = checkEvents(result.events);
    if ('error' in events) throw malformed(events.error);
    out.ok.writes = writes.ok;
    out.ok.events = events.ok;
  }
  return out.ok as GuestOutput;
}

function malformed(what: string): KitError {
  return new KitError('handler_error', `The twin answered a malformed result: ${what}`);
}
