import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));

/** Each source file of runtime/runner and the files of the folder it imports or re-exports from, type-only ones included. */
function importGraph(dir = here): Map<string, string[]> {
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const source = readFileSync(join(dir, file), 'utf8');
    const targets = [...source.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+['"](\.\/[^'"]+)['"]/gm)].map((m) => relative(dir, join(dir, m[1]!)).replace(/\.js$/, '.ts'));
    graph.set(file, targets.filter((t) => files.includes(t)));
  }
  return graph;
}

/** Every cycle found by a depth-first walk, as `a.ts -> b.ts -> a.ts`. */
function cycles(graph: Map<string, string[]>): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next].join(' -> '));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

describe('runtime/runner imports', () => {
  it('reads import lines, type-only and spread over lines included', () => {
    const graph = importGraph();
    expect(graph.get('world-runner.ts')).toEqual(expect.arrayContaining(['api.ts', 'checks.ts', 'scenarios.ts', 'services.ts', 'answers.ts']));
    // `import type { … } from './services.js'` in checks.ts.
    expect(graph.get('checks.ts')).toContain('services.ts');
    expect(cycles(new Map([['a.ts', ['b.ts']], ['b.ts', ['a.ts']]]))).toEqual(['a.ts -> b.ts -> a.ts']);
  });

  it('go one way: no file imports one that imports it back, however far round', () => {
    expect(cycles(importGraph())).toEqual([]);
    expect(cycles(importGraph(join(here, 'changesets')))).toEqual([]);
    expect(importGraph(join(here, 'changesets')).get('changesets.ts')).not.toContain('origins.ts');
  });

  it('give the runner to its parts as interfaces: checks, scenarios and the API never import world-runner.ts', () => {
    const graph = importGraph();
    for (const part of ['api.ts', 'checks.ts', 'scenarios.ts', 'routes.ts', 'services.ts', 'answers.ts']) expect([part, graph.get(part)?.includes('world-runner.ts')]).toEqual([part, false]);
  });
});
