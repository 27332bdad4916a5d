/**
 * Compiling a check: JavaScript (ESM) that exports `check` (or default) as
 * `{ name, run(entry, tree) }`. The source is checked statically here (it parses, imports
 * nothing, exports `check` or `default`) and turned into one sandbox script: the module as an
 * iife assigned to a global, then the guest wrapper (`./guest.ts`). Whether the export really
 * is a check is known only once the script runs: the runner loads it in the check's own
 * sandbox context and asks `__kit_check_name()` (see `readCheckName`).
 *
 * Nothing here runs the check's code: it is untrusted and runs only inside the sandbox.
 */
import * as esbuild from 'esbuild';
import { KitError } from '../errors.js';
import { CHECK_GUEST_SOURCE, CHECK_MODULE_GLOBAL } from './guest.js';

/** The largest check source accepted. A check is a few functions, not a bundle. */
export const MAX_CHECK_SOURCE = 256 * 1024;

/**
 * The deepest nesting of brackets a check may have. esbuild's time grows with the square of
 * nested blocks (4,000 took 0.6 s here; 120,000, within the size limit, blocked the world's
 * thread for 131 s and then stopped esbuild's service for the whole process), so deeper
 * sources are refused before esbuild sees them. Real code nests a few dozen deep.
 */
export const MAX_CHECK_NESTING = 1000;

/**
 * How deep `source` nests `(`, `[`, `{` and template `${`, outside comments and string
 * literals. Regular expression literals are read as code: their brackets count too, so a
 * regex of unbalanced brackets moves the measure by that many, no more.
 */
export function nestingDepth(source: string): number {
  // What each open bracket is: 1 a bracket, 2 a template's `${`; the stack's length is the depth.
  const open: number[] = [];
  let deepest = 0;
  let i = 0;
  const n = source.length;
  /** Skips a template's text from `i` (after its backtick or the `}` of an expression). */
  const templateText = (): void => {
    while (i < n) {
      const c = source.charCodeAt(i);
      if (c === 92 /* \ */) i += 2;
      else if (c === 96 /* ` */) {
        i++;
        return;
      } else if (c === 36 /* $ */ && source.charCodeAt(i + 1) === 123 /* { */) {
        i += 2;
        open.push(2);
        if (open.length > deepest) deepest = open.length;
        return;
      } else i++;
    }
  };
  while (i < n) {
    const c = source.charCodeAt(i);
    if (c === 47 /* / */ && source.charCodeAt(i + 1) === 47) {
      const end = source.indexOf('\n', i);
      i = end < 0 ? n : end + 1;
    } else if (c === 47 && source.charCodeAt(i + 1) === 42 /* * */) {
      const end = source.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === 39 /* ' */ || c === 34 /* " */) {
      i++;
      while (i < n) {
        const d = source.charCodeAt(i);
        if (d === 92) i += 2;
        else {
          i++;
          if (d === c || d === 10) break;
        }
      }
    } else if (c === 96) {
      i++;
      templateText();
    } else if (c === 40 || c === 91 || c === 123) {
      open.push(1);
      if (open.length > deepest) deepest = open.length;
      i++;
    } else if (c === 41 || c === 93 || c === 125) {
      const was = open.pop();
      i++;
      // The `}` of a template's expression: the template's text goes on.
      if (was === 2) templateText();
    } else i++;
  }
  return deepest;
}

export interface CompiledCheck {
  /** The sandbox script: defines `__kit_check_name()` and `__kit_check_run(inputJson)`. */
  script: string;
}

function invalid(message: string, details?: Record<string, unknown>): KitError {
  return new KitError('invalid_check', message, details);
}

function place(m: esbuild.Message): string {
  return m.location ? `line ${m.location.line}, column ${m.location.column + 1}: ${m.text}` : m.text;
}

function firstError(e: unknown): esbuild.Message | undefined {
  const errors = (e as { errors?: esbuild.Message[] }).errors;
  return Array.isArray(errors) ? errors[0] : undefined;
}

/**
 * How long esbuild may take over one check. A few-KB source can take it minutes (2,000 nested
 * arrow functions, 6 KB: 24.5 s; 20,000 comma-separated values: 3.6 s; 20,000 labels: 37 s);
 * an ordinary check takes a few milliseconds.
 */
export const CHECK_COMPILE_DEADLINE_MS = 2000;

/** The compile running now: checks are compiled one at a time, so each gets its own deadline. */
let compiling: Promise<unknown> = Promise.resolve();

/**
 * `work` (a call to esbuild's service, which runs in a process of its own while this thread
 * goes on), or invalid_check once `leftMs` have passed. Then the service is stopped, which ends
 * its work and leaves `work` pending for good; the next call starts a new service. The refusal
 * names the whole compile's deadline (`deadlineMs`), not what was left of it for this pass.
 */
async function withinDeadline<T>(work: Promise<T>, leftMs: number, deadlineMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), leftMs);
  });
  try {
    const first = await Promise.race([work, late]);
    if (first !== 'late') return first as T;
  } finally {
    clearTimeout(timer);
  }
  void esbuild.stop();
  throw invalid(`the check took longer than ${deadlineMs} ms to compile; simplify it`, { deadlineMs });
}

/**
 * Compiles a check's source into a sandbox script. Refuses (KitError `invalid_check`) a source
 * that is not a string, too large, nested too deep, slower to compile than the deadline, does
 * not parse, imports anything, is CommonJS, or exports neither `check` nor `default`.
 */
export function compileCheck(source: string, deadlineMs = CHECK_COMPILE_DEADLINE_MS): Promise<CompiledCheck> {
  const run = compiling.then(() => compileNow(source, deadlineMs));
  compiling = run.catch(() => undefined);
  return run;
}

async function compileNow(source: string, deadlineMs: number): Promise<CompiledCheck> {
  if (typeof source !== 'string') throw invalid('a check is JavaScript source text');
  if (source.length > MAX_CHECK_SOURCE) throw invalid(`the check is larger than ${MAX_CHECK_SOURCE} characters`);
  if (source.trim() === '') throw invalid('the check is empty: export const check = { name, run(entry, tree) }');
  if (nestingDepth(source) > MAX_CHECK_NESTING) throw invalid(`the check nests brackets deeper than ${MAX_CHECK_NESTING}`);
  const started = Date.now();

  // Pass 1: parse and read the module's shape; every import is left external and reported.
  let meta: esbuild.Metafile;
  try {
    const result = await withinDeadline(
      esbuild.build({
        stdin: { contents: source, loader: 'js', sourcefile: 'check.js' },
        bundle: true,
        external: ['*'],
        format: 'esm',
        platform: 'neutral',
        write: false,
        metafile: true,
        logLevel: 'silent',
        outfile: 'check.out.js',
      }),
      deadlineMs,
      deadlineMs,
    );
    meta = result.metafile;
  } catch (e) {
    if (e instanceof KitError) throw e;
    const m = firstError(e);
    // No message of esbuild's: its service failed (the sync API's stayed dead for the process); start afresh next time.
    if (m === undefined) void esbuild.stop();
    throw invalid(`the check does not parse: ${m ? place(m) : String(e)}`, m?.location ? { line: m.location.line, column: m.location.column + 1 } : undefined);
  }
  const input = meta.inputs['check.js'];
  const output = meta.outputs['check.out.js'];
  if (input?.format === 'cjs') throw invalid('a check is an ES module: use export const check = { name, run } (or export default), not module.exports');
  const imports = input?.imports ?? [];
  if (imports.length > 0) {
    throw invalid(`a check cannot import anything (it imports '${imports[0]!.path}'): it sees only the entry and the tree`, { import: imports[0]!.path });
  }
  const exported = output?.exports ?? [];
  if (!exported.includes('check') && !exported.includes('default')) {
    throw invalid(
      exported.length === 0
        ? 'the check exports nothing: export const check = { name, run(entry, tree) } (or export default)'
        : `the check exports no check (it exports ${exported.join(', ')}): export const check = { name, run(entry, tree) } (or export default)`,
    );
  }

  // Pass 2: the module as a script the sandbox can load, within what is left of the deadline.
  let code: string;
  try {
    const left = Math.max(1, deadlineMs - (Date.now() - started));
    code = (await withinDeadline(esbuild.transform(source, { loader: 'js', format: 'iife', globalName: CHECK_MODULE_GLOBAL, target: 'es2020', sourcefile: 'check.js', logLevel: 'silent' }), left, deadlineMs)).code;
  } catch (e) {
    if (e instanceof KitError) throw e;
    const m = firstError(e);
    if (m === undefined) void esbuild.stop();
    throw invalid(`the check cannot be compiled: ${m ? place(m) : String(e)}`);
  }
  return { script: `${code}\n${CHECK_GUEST_SOURCE}` };
}
