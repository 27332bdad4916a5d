/**
 * Compiling a check: JavaScript (ESM) that exports `check` (or default) as
 * `{ name, run(entry, tree) }`. The source is checked statically here (it parses, imports
 * nothing, exports `check` or `default`) and turned into one sandbox script: the module's body
 * inside a function that answers its exports, assigned to a global, then the guest wrapper
 * (`./guest.ts`). Whether the export really is a check is known only once the script runs: the
 * runner loads it in the check's own sandbox context and asks `__kit_check_name()` (see
 * `readCheckName`).
 *
 * Parsed with acorn, pure JavaScript, in this thread, on every host (workerd has no esbuild and
 * refuses to compile code from strings; nothing here evaluates the check). The export statements
 * are rewritten by their source ranges, so the rest of the text, and every line and column of
 * it, is the check's own. Nothing here runs the check's code: it is untrusted and runs only
 * inside the sandbox.
 */
import { getLineInfo, Parser, type Node, type Options, type Pattern, type Program } from 'acorn';
import { KitError } from '../errors.js';
import { CHECK_GUEST_SOURCE, CHECK_MODULE_GLOBAL } from './guest.js';

/** The largest check source accepted. A check is a few functions, not a bundle. */
export const MAX_CHECK_SOURCE = 256 * 1024;

/**
 * The deepest nesting of brackets a check may have, refused before the parser sees it. A
 * recursive-descent parser's stack grows with nesting (acorn reports "not enough stack space"
 * near 1,000 nested arrays on a main thread), and the sandbox's parser outruns its native stack
 * on deep nesting (runtime/sandbox/README.md). Real code nests a few dozen deep.
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

/**
 * How long parsing one check may take on a host whose clock moves while it computes (checked
 * between tokens). Every source within MAX_CHECK_SOURCE parses in well under it here; the bound
 * is for what no one measured. Where the clock stands still (workerd), the source's size bounds
 * the work: the parser is linear, its scopes' duplicate checks included (see `ScopedParser`).
 */
export const CHECK_COMPILE_DEADLINE_MS = 2000;

function invalid(message: string, details?: Record<string, unknown>): KitError {
  return new KitError('invalid_check', message, details);
}

/** A name list whose `indexOf` is a set lookup: acorn's scopes keep declared names in arrays and search them per declaration. */
class NameList extends Array<string> {
  readonly #names = new Set<string>();
  override push(...names: string[]): number {
    for (const n of names) this.#names.add(n);
    return super.push(...names);
  }
  override indexOf(name: string, from?: number): number {
    return this.#names.has(name) ? super.indexOf(name, from) : -1;
  }
}

interface AcornScope {
  var: string[];
  lexical: string[];
  functions: string[];
}

/**
 * acorn with its scopes' name lists made sets: each declaration searched the arrays of names
 * declared before it, so 20,000 `let`s in one function took 1.6 s (quadratic); now linear.
 */
const ScopedParser = Parser.extend(
  (Base) =>
    class extends Base {
      enterScope(flags: number): void {
        const self = this as unknown as { scopeStack: AcornScope[] };
        (Base.prototype as unknown as { enterScope(this: unknown, flags: number): void }).enterScope.call(this, flags);
        const scope = self.scopeStack[self.scopeStack.length - 1]!;
        scope.var = new NameList();
        scope.lexical = new NameList();
        scope.functions = new NameList();
      }
    } as unknown as typeof Parser,
);

/** acorn's failure: a SyntaxError with the place it stopped at. */
interface AcornError {
  message: string;
  loc?: { line: number; column: number };
}

function parseModule(source: string, deadlineMs: number): Program {
  const deadline = performance.now() + deadlineMs;
  let tokens = 0;
  const options: Options = {
    ecmaVersion: 'latest',
    sourceType: 'module',
    onToken: () => {
      if ((++tokens & 255) === 0 && performance.now() > deadline) throw new CompileDeadline();
    },
  };
  try {
    return ScopedParser.parse(source, options);
  } catch (e) {
    if (e instanceof CompileDeadline) throw invalid(`the check took longer than ${deadlineMs} ms to compile; simplify it`, { deadlineMs });
    const { message, loc } = e as AcornError;
    if (loc === undefined || typeof message !== 'string') throw invalid(`the check does not parse: ${String(e)}`);
    // acorn's message ends with its own "(line:column)"; the place is said once, as ours.
    const text = message.replace(/ \(\d+:\d+\)$/, '');
    const details = { line: loc.line, column: loc.column + 1 };
    if (/^Not enough stack space/.test(text)) throw invalid(`the check nests too deep to compile (line ${details.line}, column ${details.column}); simplify it`, details);
    throw invalid(`the check does not parse: line ${details.line}, column ${details.column}: ${text}`, details);
  }
}

class CompileDeadline extends Error {}

/** Any node of the tree, as acorn makes them: a `type`, a source range, and child nodes among its properties. */
type AnyNode = Node & Record<string, unknown>;

function isNode(v: unknown): v is AnyNode {
  return typeof v === 'object' && v !== null && typeof (v as { type?: unknown }).type === 'string';
}

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);

/** What the module does that a check may not, found in one walk: the first of each. */
interface Findings {
  /** `import(…)` anywhere, or `import.meta`. */
  dynamicImport?: { what: string };
  /** `await` outside every function (top-level await), with its place. */
  topLevelAwait?: Node;
  /** `module.exports`, `exports.x` or `require(…)`: a CommonJS module. */
  commonJs: boolean;
}

function walk(root: Node, findings: Findings): void {
  // An explicit stack: the tree is as deep as the check nests, and nothing here may overflow.
  const stack: { node: AnyNode; inFunction: boolean }[] = [{ node: root as AnyNode, inFunction: false }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { node, inFunction } = item;
    switch (node.type) {
      case 'ImportExpression': {
        const source = node['source'];
        findings.dynamicImport ??= { what: isNode(source) && source.type === 'Literal' && typeof source['value'] === 'string' ? source['value'] : 'a computed path' };
        break;
      }
      case 'MetaProperty':
        if ((node['meta'] as { name?: string }).name === 'import') findings.dynamicImport ??= { what: 'import.meta' };
        break;
      case 'AwaitExpression':
        if (!inFunction) findings.topLevelAwait ??= node;
        break;
      case 'ForOfStatement':
        if (node['await'] === true && !inFunction) findings.topLevelAwait ??= node;
        break;
      case 'MemberExpression': {
        const object = node['object'];
        const property = node['property'];
        if (isNode(object) && object.type === 'Identifier') {
          const name = object['name'];
          if (name === 'exports' || (name === 'module' && isNode(property) && property['name'] === 'exports')) findings.commonJs = true;
        }
        break;
      }
      case 'CallExpression': {
        const callee = node['callee'];
        if (isNode(callee) && callee.type === 'Identifier' && callee['name'] === 'require') findings.commonJs = true;
        break;
      }
    }
    const childInFunction = inFunction || FUNCTIONS.has(node.type);
    // Children pushed last first, so they are visited in source order.
    const children: AnyNode[] = [];
    for (const key in node) {
      const value = node[key];
      if (Array.isArray(value)) {
        for (const v of value) if (isNode(v)) children.push(v);
      } else if (isNode(value)) children.push(value);
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i]!, inFunction: childInFunction });
  }
}

/** The names a declaration binds (`export const { a, b: [c] } = …` binds a and c). */
function boundNames(node: AnyNode | Pattern, out: string[]): void {
  const n = node as AnyNode;
  switch (n.type) {
    case 'Identifier':
      out.push(n['name'] as string);
      break;
    case 'VariableDeclaration':
      for (const d of n['declarations'] as AnyNode[]) boundNames(d['id'] as AnyNode, out);
      break;
    case 'FunctionDeclaration':
    case 'ClassDeclaration':
      if (isNode(n['id'])) out.push(n['id']['name'] as string);
      break;
    case 'ObjectPattern':
      for (const p of n['properties'] as AnyNode[]) boundNames((p.type === 'RestElement' ? p['argument'] : p['value']) as AnyNode, out);
      break;
    case 'ArrayPattern':
      for (const e of n['elements'] as (AnyNode | null)[]) if (e !== null) boundNames(e, out);
      break;
    case 'AssignmentPattern':
      boundNames(n['left'] as AnyNode, out);
      break;
    case 'RestElement':
      boundNames(n['argument'] as AnyNode, out);
      break;
  }
}

/** An export's or import's name: an identifier, or a string (`export { a as "b c" }`). */
function nameOf(node: unknown): string {
  const n = node as { type: string; name?: string; value?: unknown };
  return n.type === 'Identifier' ? String(n.name) : String(n.value);
}

function importOf(source: unknown): string {
  return String((source as { value?: unknown }).value);
}

/**
 * Compiles a check's source into a sandbox script. Refuses (KitError `invalid_check`) a source
 * that is not a string, too large, nested too deep, slower to parse than the deadline, does not
 * parse, imports anything, awaits at its top level, is CommonJS, or exports neither `check` nor
 * `default`.
 */
export async function compileCheck(source: string, deadlineMs = CHECK_COMPILE_DEADLINE_MS): Promise<CompiledCheck> {
  if (typeof source !== 'string') throw invalid('a check is JavaScript source text');
  if (source.length > MAX_CHECK_SOURCE) throw invalid(`the check is larger than ${MAX_CHECK_SOURCE} characters`);
  if (source.trim() === '') throw invalid('the check is empty: export const check = { name, run(entry, tree) }');
  if (nestingDepth(source) > MAX_CHECK_NESTING) throw invalid(`the check nests brackets deeper than ${MAX_CHECK_NESTING}`);
  const program = parseModule(source, deadlineMs);

  const findings: Findings = { commonJs: false };
  walk(program, findings);
  /** Exported name → the local binding that holds it. */
  const exported = new Map<string, string>();
  /** Source ranges rewritten, in order: the export keywords and statements. */
  const edits: { start: number; end: number; text: string }[] = [];
  let defaultLocal = '__kit_check_default';
  while (source.includes(defaultLocal)) defaultLocal += '_';
  for (const statement of program.body) {
    const node = statement as AnyNode;
    switch (statement.type) {
      case 'ImportDeclaration':
      case 'ExportAllDeclaration':
        throw invalid(`a check cannot import anything (it imports '${importOf(node['source'])}'): it sees only the entry and the tree`, { import: importOf(node['source']) });
      case 'ExportNamedDeclaration': {
        if (isNode(node['source'])) throw invalid(`a check cannot import anything (it imports '${importOf(node['source'])}'): it sees only the entry and the tree`, { import: importOf(node['source']) });
        const declaration = node['declaration'];
        if (isNode(declaration)) {
          // `export const x = …` → `const x = …`
          edits.push({ start: statement.start, end: declaration.start, text: '' });
          const names: string[] = [];
          boundNames(declaration, names);
          for (const name of names) exported.set(name, name);
        } else {
          // `export { a as check }` → `;` (a statement still ends there: no two lines run together)
          edits.push({ start: statement.start, end: statement.end, text: ';' });
          for (const spec of node['specifiers'] as AnyNode[]) exported.set(nameOf(spec['exported']), nameOf(spec['local']));
        }
        break;
      }
      case 'ExportDefaultDeclaration': {
        const declaration = node['declaration'] as AnyNode;
        const named = (declaration.type === 'FunctionDeclaration' || declaration.type === 'ClassDeclaration') && isNode(declaration['id']);
        if (named) {
          // `export default function f() {}` → `function f() {}`, hoisted as before
          edits.push({ start: statement.start, end: declaration.start, text: '' });
          exported.set('default', nameOf(declaration['id']));
        } else {
          // `export default <expression or anonymous declaration>` → `<local> = (…);`
          edits.push({ start: statement.start, end: statement.end, text: `${defaultLocal} = (${source.slice(declaration.start, declaration.end)});` });
          exported.set('default', defaultLocal);
        }
        break;
      }
    }
  }
  if (findings.dynamicImport !== undefined) {
    const what = findings.dynamicImport.what;
    throw invalid(what === 'import.meta' ? 'a check cannot import anything (it uses import.meta): it sees only the entry and the tree' : `a check cannot import anything (it imports '${what}'): it sees only the entry and the tree`, { import: what });
  }
  if (exported.size === 0 && findings.commonJs) throw invalid('a check is an ES module: use export const check = { name, run } (or export default), not module.exports');
  if (findings.topLevelAwait !== undefined) {
    const at = getLineInfo(source, findings.topLevelAwait.start);
    throw invalid(`the check cannot be compiled: line ${at.line}, column ${at.column + 1}: top-level await is not available in a check (it runs synchronously)`, { line: at.line, column: at.column + 1 });
  }
  if (!exported.has('check') && !exported.has('default')) {
    throw invalid(
      exported.size === 0
        ? 'the check exports nothing: export const check = { name, run(entry, tree) } (or export default)'
        : `the check exports no check (it exports ${[...exported.keys()].join(', ')}): export const check = { name, run(entry, tree) } (or export default)`,
    );
  }

  let body = '';
  let at = 0;
  for (const edit of edits) {
    body += source.slice(at, edit.start) + edit.text;
    at = edit.end;
  }
  body += source.slice(at);
  // A hashbang is a comment only where a file starts.
  if (body.startsWith('#!')) body = `//${body.slice(2)}`;
  const getters = [...exported].map(([name, local]) => `get ${JSON.stringify(name)}() { return ${local}; }`).join(', ');
  // The module's first line stays the script's first line, so a guest error's place is the check's own.
  const script = `var ${CHECK_MODULE_GLOBAL} = (function () { 'use strict'; var ${defaultLocal}; ${body}
;return { ${getters} };
})();
${CHECK_GUEST_SOURCE}`;
  return { script };
}
