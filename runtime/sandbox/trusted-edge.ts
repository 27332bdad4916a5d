/**
 * Trusted realms where code generation is refused (workerd): each script's realm comes from the
 * module a build wrote for it with `trustedModuleSource` (trusted-module.ts). Needs no Node API.
 */
import type { TrustedRealm, TrustedRealmMaker } from './trusted.js';

/** The default export of a module `trustedModuleSource` wrote: makes one realm of its script. */
export type TrustedRealmLoader = () => TrustedRealm;

/**
 * A realm maker over the modules built for each trusted script, keyed by the script's exact text
 * (the `source` the build gave `trustedModuleSource`, which is the `TwinBundle.source` the runner
 * loads). A script no module was built for fails to load (`load_error`), naming why.
 */
export function edgeTrustedRealms(loaders: ReadonlyMap<string, TrustedRealmLoader>): TrustedRealmMaker {
  if (!(loaders instanceof Map)) throw new TypeError('edgeTrustedRealms(loaders): expected a Map from script text to its module\'s default export');
  for (const loader of loaders.values()) if (typeof loader !== 'function') throw new TypeError('edgeTrustedRealms: every loader is the default export (a function) of a module trustedModuleSource wrote');
  return (name, source) => {
    const loader = loaders.get(source);
    if (loader === undefined) throw new Error(`no trusted module was built for the script loaded as '${name}' (this host runs only the trusted scripts its build wrote with trustedModuleSource)`);
    return loader();
  };
}
