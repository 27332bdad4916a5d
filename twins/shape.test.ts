/**
 * Every twin under twins/ has the one shape (twins/README.md): its entry, error shape, stores,
 * resources, tests and README where a reader looks for them, shared machinery (`twin/lib/`) that
 * imports nothing from `twin/resources/`, and no import cycle inside `twin/`. The import graph
 * is read from the sources (TypeScript's own pre-parser: imports, `export … from`, `import()`).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const TWINS = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(TWINS);
const SDK = join(ROOT, 'sdk', 'twin');

const REQUIRED_FILES = ['README.md', 'twin/index.ts', 'twin/errors.ts', 'twin/stores.ts'];
const REQUIRED_FOLDERS = ['twin/resources', 'test'];

function twinFolders(): string[] {
  return readdirSync(TWINS, { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== 'node_modules')
    .map((e) => e.name)
    .sort();
}

function sourcesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...sourcesUnder(path));
    else if (/\.tsx?$/.test(e.name)) out.push(path);
  }
  return out.sort();
}

/** `./x.js` from `from` as the file it names (`x.ts` or `x.tsx`), or undefined for a package or a missing file. */
function resolveImport(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const target = resolve(dirname(from), spec);
  const candidates = /\.js$/.test(target) ? [target.replace(/\.js$/, '.ts'), target.replace(/\.js$/, '.tsx'), target] : [target, `${target}.ts`, `${target}/index.ts`];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile());
}

/** The files `file` imports (type-only imports too: a circle of types is still a circle for a reader). */
function importsOf(file: string): { spec: string; target: string | undefined }[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles.map((f) => ({ spec: f.fileName, target: resolveImport(file, f.fileName) }));
}

/** The import graph among `files`: each file to the files of the set it imports. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const inside = new Set(files);
  return new Map(files.map((f) => [f, importsOf(f).map((i) => i.target).filter((t): t is string => t !== undefined && inside.has(t))]));
}

/** The circles of a graph: strongly connected components of more than one node, or a node that reaches itself (Tarjan). */
function cyclesOf(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (edges.get(v) ?? []).includes(v)) cycles.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

const isTestFile = (file: string): boolean => /\.test(-helper)?\.tsx?$/.test(file);
const under = (file: string, dir: string): boolean => file === dir || file.startsWith(dir + sep);

describe('the one twin shape', () => {
  const twins = twinFolders();

  it('finds the built-in twins', () => {
    expect(twins).toEqual(expect.arrayContaining(['github', 'hello', 'smtp', 'stripe']));
  });

  describe.each(twins)('twins/%s', (vendor) => {
    const dir = join(TWINS, vendor);
    const twinDir = join(dir, 'twin');
    const rel = (file: string): string => relative(dir, file).split(sep).join('/');

    it('has its entry, error shape, stores, resources, tests and README where the shape puts them', () => {
      const missing = [
        ...REQUIRED_FILES.filter((f) => !(existsSync(join(dir, f)) && statSync(join(dir, f)).isFile())),
        ...REQUIRED_FOLDERS.filter((f) => !(existsSync(join(dir, f)) && statSync(join(dir, f)).isDirectory())).map((f) => `${f}/`),
      ];
      expect(missing, `twins/${vendor} lacks these parts of the shape (twins/README.md)`).toEqual([]);
    });

    it('keeps twin/lib/ free of imports from twin/resources/', () => {
      const lib = join(twinDir, 'lib');
      if (!existsSync(lib)) return;
      const wrong = sourcesUnder(lib).flatMap((file) =>
        importsOf(file)
          .filter((i) => i.target !== undefined && under(i.target, join(twinDir, 'resources')))
          .map((i) => `${rel(file)} imports ${i.spec}`));
      expect(wrong, 'shared machinery must not depend on the handlers').toEqual([]);
    });

    it('has no import cycle inside twin/', () => {
      const cycles = cyclesOf(importGraph(sourcesUnder(twinDir))).map((c) => c.map(rel).join(' <-> '));
      expect(cycles).toEqual([]);
    });

    it('imports only the twin SDK, packages and its own twin/ files from the code it bundles', () => {
      const wrong = sourcesUnder(twinDir).filter((f) => !isTestFile(f)).flatMap((file) =>
        importsOf(file)
          .filter((i) => i.spec.startsWith('node:') || (i.spec.startsWith('.') && !(i.target !== undefined && (under(i.target, twinDir) || under(i.target, SDK)))))
          .map((i) => `${rel(file)} imports ${i.spec}`));
      expect(wrong).toEqual([]);
    });
  });
});

describe('the circles of an import graph', () => {
  it('names the files of each circle, a file importing itself, and nothing that only leads into one', () => {
    const graph = new Map([
      ['a', ['b']], ['b', ['c']], ['c', ['a', 'd']], ['d', []], ['e', ['a']], ['f', ['f']], ['g', ['h']], ['h', ['g']],
    ]);
    expect(cyclesOf(graph)).toEqual([['a', 'b', 'c'], ['f'], ['g', 'h']]);
    expect(cyclesOf(new Map([['a', ['b']], ['b', ['c']], ['c', []]]))).toEqual([]);
  });

  it('reads the graph from the sources, type-only imports and re-exports too', () => {
    const lib = join(TWINS, 'stripe', 'twin', 'lib');
    const graph = importGraph(sourcesUnder(lib));
    // call.ts imports expand.ts; store.ts names Call only as a type (request.ts).
    expect(graph.get(join(lib, 'call.ts'))).toContain(join(lib, 'expand.ts'));
    expect(graph.get(join(lib, 'store.ts'))).toContain(join(lib, 'request.ts'));
  });
});
