import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { projectRoot } from '../../src/paths.js';

/** Every module of src/ and the modules of src/ it imports (type-only imports included). */
function importGraph(): Map<string, string[]> {
  const root = path.join(projectRoot(), 'src');
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) files.push(full);
    }
  };
  walk(root);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .map((f) => f.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => path.resolve(path.dirname(file), name.replace(/\.js$/, '.ts')));
    graph.set(path.relative(root, file), [...new Set(targets.map((t) => path.relative(root, t)))]);
  }
  return graph;
}

/** Strongly connected components with more than one module (or a module importing itself). */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    indices.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indices.get(next)!));
      }
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return found;
}

describe('architecture', () => {
  const graph = importGraph();

  it('reads the imports of every module', () => {
    expect(graph.get('runtime.ts')).to.include('jobs/runner.ts');
    expect(graph.get('http/app.ts')).to.include('runtime.ts');
  });

  it('has no import cycles', () => {
    expect(cycles(graph)).to.deep.equal([]);
  });

  it('finds a cycle when there is one', () => {
    const looped = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(cycles(looped)).to.deep.equal([['a.ts', 'b.ts', 'c.ts']]);
  });

  it('keeps the HTTP edge outermost: only the entry point imports from src/http', () => {
    const inward = [...graph.entries()].flatMap(([from, targets]) =>
      from.startsWith('http/') || from === 'main.ts'
        ? []
        : targets.filter((t) => t.startsWith('http/')).map((t) => `${from} -> ${t}`),
    );
    expect(inward).to.deep.equal([]);
  });

  it('lets only the database layer and repositories hold Cypher: routes reach it through services', () => {
    const direct = [...graph.entries()].flatMap(([from, targets]) =>
      from.startsWith('http/')
        ? targets.filter((t) => t.startsWith('db/')).map((t) => `${from} -> ${t}`)
        : [],
    );
    expect(direct).to.deep.equal([]);
  });
});
