/**
 * The edge variant's Worker: stateless, in front of the Durable Objects. The admin surface
 * `/-/…` is answered here (the multi-world host's own surface over `EdgeWorlds`); a world's
 * paths — its vendor wire, its API, its streams — go whole to the family object that holds it,
 * which authenticates and serves them with the same host core as every other host.
 */
import { quickjsGlue, quickjsWasm, trustedLoaders, twinBundles } from 'kit-edge:assets';
import type { UntrustedLane } from '../../runtime/lane/types.js';
import { KIT_VERSION } from '../../runtime/version.js';
import { createHostCore, type HostCore } from '../core/core.js';
import { requestWorld } from './origins.js';
import { createAdminSurface } from '../multi-world/admin.js';
import { EdgeTwins, EdgeWorlds, FamilyCache } from './admin.js';
import { edgeGuestEngines, type EdgeGuestAssets } from './engines.js';
import { EDGE_MAX_BODY_BYTES, INDEX_NAME, MISS_HEADER, type EdgeEnv } from './env.js';
import { answerRequest, headOf } from './web.js';

export { WorldFamily } from './family.js';
export { WorldIndex } from './index-object.js';

const HOST_CODE = `${KIT_VERSION}+edge`;
const NOT_FOUND_HINT = 'this host serves /<org>/<world>/<vendor>/… and /-/<org>/<world>/… of the worlds in GET /-/worlds';

const families = new FamilyCache();
let front: { env: EdgeEnv; core: HostCore } | undefined;
/** A lane installed twins are checked in: QuickJS in this isolate, stopped by step budgets. */
function twinCheckLane(): UntrustedLane {
  return edgeGuestEngines({ wasm: quickjsWasm, glue: quickjsGlue as EdgeGuestAssets['glue'], trustedLoaders: trustedLoaders as EdgeGuestAssets['trustedLoaders'] }).lane({ name: 'edge twin check' });
}

/** The Worker's own core: the admin surface, and the 404s of paths that name no world. */
function frontCore(env: EdgeEnv): HostCore {
  if (front?.env === env) return front.core;
  const configured = typeof env.ADMIN_TOKEN === 'string' && env.ADMIN_TOKEN.length >= 24;
  if (!configured) console.error('kit edge: ADMIN_TOKEN is not set (or shorter than 24 characters): the admin endpoints refuse every token (docs/edge.md)');
  const core = createHostCore({
    worlds: { find: () => null, notFoundHint: NOT_FOUND_HINT },
    admin: createAdminSurface({
      // Unset, the admin token is one nobody holds.
      adminToken: configured ? env.ADMIN_TOKEN! : `unset-${crypto.randomUUID()}-${crypto.randomUUID()}`,
      worlds: new EdgeWorlds(env, twinBundles.map((t) => t.vendor)),
      twins: new EdgeTwins(env, twinBundles, twinCheckLane),
      hostCode: HOST_CODE,
      consoleDir: null,
    }),
    hostCode: HOST_CODE,
    maxBodyBytes: EDGE_MAX_BODY_BYTES,
  });
  front = { env, core };
  return core;
}

async function familyOf(env: EdgeEnv, name: string, fresh: boolean): Promise<string | null> {
  if (!fresh) {
    const known = families.get(name);
    if (known !== undefined) return known;
  }
  const family = await env.INDEX.get(env.INDEX.idFromName(INDEX_NAME)).resolve(name);
  if (family === null) families.forget(name);
  else families.set(name, family);
  return family;
}

export default {
  async fetch(request: Request, env: EdgeEnv): Promise<Response> {
    const core = frontCore(env);
    const { name } = requestWorld(env, new URL(request.url), headOf(request));
    if (name === null) return answerRequest(core.handler, request, EDGE_MAX_BODY_BYTES);
    for (const fresh of [false, true]) {
      const family = await familyOf(env, name, fresh);
      if (family === null) break;
      // The body may be read once: a retry (a stale cache entry) sends a copy made before.
      const sent = fresh ? request : request.clone();
      const response = await env.FAMILIES.get(env.FAMILIES.idFromName(family)).fetch(sent);
      if (response.headers.get(MISS_HEADER) === null) return response;
      // The family no longer holds the world (removed, or made again elsewhere): ask the index again.
      families.forget(name);
    }
    return answerRequest(core.handler, request, EDGE_MAX_BODY_BYTES);
  },
};
