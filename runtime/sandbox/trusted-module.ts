/**
 * BUILD TIME ONLY (imports esbuild): a trusted script as an ES module that makes its realm without
 * evaluating code at run time, for hosts that refuse code generation and have no `node:vm`
 * (workerd). The edge build writes `await trustedModuleSource(bundle.source)` into a module per
 * built-in twin, imports them, and hands their default exports to `edgeTrustedRealms`
 * (trusted-edge.ts), keyed by the same `bundle.source`.
 *
 * The module holds the prelude and the script as functions whose `globalThis` is a parameter: the
 * realm's global, a fresh `Object.create(<the real global>)` with its own `Math`
 * (`Object.create(Math)`) and its own `Date`. Several worlds share one isolate on workerd, and the
 * guest runtime installs a world's seeded `Math.random` and its clock `Date` on its globals. In a
 * `node:vm` context a free identifier names the context's global; here, every free identifier that
 * is not one of the language's own globals (what a fresh vm context has), and `Date` and `Math`,
 * is rewritten to `globalThis.<name>` (esbuild `define`, which replaces unbound references only),
 * so the realm's own globals — the host functions, what the script set on `globalThis` — are
 * found on the realm, and one world's clock and generator never reach another's.
 *
 * What a realm shares with the others (unlike a `node:vm` context): the intrinsics' prototypes
 * (`Array.prototype`…), and what it reads of the real global without setting it (workerd's
 * `fetch`, `TextEncoder`…, which a vm context lacks). Trusted code only: the built-in twins set
 * their globals on `globalThis` and change no intrinsic.
 */
import vm from 'node:vm';
import { transform } from 'esbuild';
import { PRELUDE_SOURCE } from './prelude.js';

/** The language's own globals (a fresh vm context's), which realms share, but for `Date` and `Math`, which each has its own. */
const SHARED_GLOBALS = new Set((vm.runInNewContext('Object.getOwnPropertyNames(globalThis)') as string[]).filter((name) => name !== 'Date' && name !== 'Math'));
/** Words that are never a global's name to rewrite (keywords, and contextual ones to be safe). */
const NOT_GLOBALS = new Set(
  ('break case catch class const continue debugger default delete do else enum export extends false finally for function if import in instanceof new null ' +
    'return super switch this throw true try typeof var void while with yield let static implements interface package private protected public await async of get set arguments').split(' '),
);

/**
 * `source` with its free references to the realm's own globals read from `globalThis`. Every
 * identifier-like word of the text is a candidate; esbuild's `define` leaves bound names, property
 * names, strings and comments alone.
 */
async function realmScoped(source: string, label: string): Promise<string> {
  const define: Record<string, string> = {};
  for (const [word] of source.matchAll(/[A-Za-z_$][\w$]*/g)) {
    if (!SHARED_GLOBALS.has(word) && !NOT_GLOBALS.has(word)) define[word] = `globalThis.${word}`;
  }
  try {
    return (await transform(source, { loader: 'js', define, sourcefile: label, logLevel: 'silent', charset: 'utf8' })).code;
  } catch (e) {
    const errors = (e as { errors?: { text: string }[] }).errors;
    throw new Error(`trustedModuleSource: ${label} does not parse: ${errors?.[0]?.text ?? String(e)}`);
  }
}

/**
 * The ES module text of `source`'s realm maker. Its default export, called with no argument,
 * answers a `TrustedRealm` (trusted.ts): `{ global, prelude, runScript }`, the prelude already run.
 */
export async function trustedModuleSource(source: string): Promise<string> {
  if (typeof source !== 'string') throw new TypeError('trustedModuleSource(source): expected the script as text');
  const prelude = (await realmScoped(PRELUDE_SOURCE, '<prelude>')).trim().replace(/;$/, '');
  const script = await realmScoped(source, '<script>');
  // Module-scope names are prefixed so that no free identifier of the script can reach them.
  return `// Written by trustedModuleSource (runtime/sandbox/trusted-module.ts): a trusted script's realm, made without eval.
const __kit_realm_global = globalThis;
const __kit_realm_RealDate = Date;
const __kit_realm_RealMath = Math;

function __kit_realm_prelude(globalThis) {
  return (
${prelude}
  );
}

function __kit_realm_script(globalThis) {
${script}
}

/** A Date of the realm's own (its statics can be replaced without touching another realm's); its instances are real Dates. */
function __kit_realm_date() {
  const RealDate = __kit_realm_RealDate;
  const RealmDate = function Date(...args) {
    return new.target === undefined ? RealDate() : Reflect.construct(RealDate, args, new.target);
  };
  Object.defineProperty(RealmDate, 'prototype', { value: RealDate.prototype, writable: false });
  Object.defineProperty(RealmDate, 'length', { value: 7 });
  RealmDate.now = RealDate.now;
  RealmDate.parse = RealDate.parse;
  RealmDate.UTC = RealDate.UTC;
  return RealmDate;
}

export default function makeRealm() {
  const global = Object.create(__kit_realm_global);
  global.globalThis = global;
  global.Math = Object.create(__kit_realm_RealMath);
  global.Date = __kit_realm_date();
  const prelude = __kit_realm_prelude(global);
  let ran = false;
  return {
    global,
    prelude,
    runScript() {
      if (ran) throw new TypeError('the script of this realm has already run');
      ran = true;
      __kit_realm_script.call(global, global);
    },
  };
}
`;
}
