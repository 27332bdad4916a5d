/**
 * The built-in twins: their entry files, relative to the repository root. `loadBuiltinTwins()`
 * in `sdk/twin/build.ts` builds each one; add a twin here to serve it in every world.
 */
export const builtinTwinEntries: readonly string[] = ['twins/hello/twin/index.ts', 'twins/stripe/twin/index.ts', 'twins/smtp/twin/index.ts', 'twins/github/twin/index.ts'];
