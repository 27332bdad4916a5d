export type { CompiledRouter, MissPart, NearMiss, RouteMatch, RouteRequest } from './types.js';
export { compileRouter } from './router.js';
export { parseQueryString, decodeLenient } from './query.js';
export { normalizeMatcher, checkJsonValue, isPlainObject, MAX_VALUE_DEPTH, type NormalMatcher } from './matcher.js';
export { parsePattern, compareSpecificity, type Segment } from './pattern.js';
