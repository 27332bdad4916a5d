/**
 * A branch's origin is its parent (spec: `…/origin`; a branch pushes to and pulls from the world
 * it was made of). The branch's runner reaches it as `ParentApi` (runtime/runner/changesets/):
 * the parent's world API, served by the parent's own runner on this host with the parent's own
 * authority (what its token opens), the parent opened first if it was closed, as a request
 * would open it. Nothing goes over the network: on the edge a branch is in its parent's family
 * object (host/edge/README.md), so the same pool serves both.
 */
import { KitError, isCodedError } from '../../runtime/errors.js';
import type { ParentApi } from '../../runtime/runner/changesets/index.js';
import type { WorldRequest, WorldResponse } from '../../runtime/runner/types.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
let made = 0;

/** `handle` serves one request of the parent's world API (opening the parent when closed). */
export function parentApiOf(parent: string, handle: (request: WorldRequest) => Promise<WorldResponse>): ParentApi {
  return async (method, path, body) => {
    const q = path.indexOf('?');
    const request: WorldRequest = {
      surface: 'api',
      method,
      path: q < 0 ? path : path.slice(0, q),
      query: q < 0 ? '' : path.slice(q + 1),
      headers: { accept: 'application/json', 'user-agent': 'twinkit-origin/1' },
      scope: 'write',
      credential: 'token',
      requestId: `origin_${(made++).toString(36)}`,
      receivedAt: Date.now(),
    };
    if (body !== undefined) {
      request.headers['content-type'] = 'application/json';
      request.body = encoder.encode(JSON.stringify(body));
    }
    let response: WorldResponse;
    try {
      response = await handle(request);
    } catch (e) {
      // The parent would not open (a twin that fails to load, the host stopping).
      const why = e instanceof Error ? e.message : String(e);
      throw new KitError('origin_unreachable', `This branch's parent (${parent}) could not be opened: ${why}`, isCodedError(e) ? { reason: e.code } : {});
    }
    const text = typeof response.body === 'string' ? response.body : decoder.decode(response.body);
    let parsed: unknown;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: response.status, body: parsed };
  };
}
