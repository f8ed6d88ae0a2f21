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

/** The graph of src/'s top-level folders (a module at the top level stands for itself). */
function folderGraph(modules: Map<string, string[]>): Map<string, string[]> {
  const folder = (file: string): string => (file.includes('/') ? file.slice(0, file.indexOf('/')) : file);
  const folders = new Map<string, Set<string>>();
  for (const [from, targets] of modules) {
    const edges = folders.get(folder(from)) ?? new Set<string>();
    for (const t of targets) if (folder(t) !== folder(from)) edges.add(folder(t));
    folders.set(folder(from), edges);
  }
  return new Map([...folders].map(([f, edges]) => [f, [...edges]]));
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

  it('has no cycles between folders: features depend on each other one way', () => {
    expect(cycles(folderGraph(graph))).to.deep.equal([]);
  });

  it('keeps the vocabularies leaves, and the schemas on them alone', () => {
    const LEAVES = ['errors/errors.ts', 'ids.ts', 'pagination.ts', 'time.ts'];
    const outside = [...graph.entries()].flatMap(([from, targets]) => {
      const folder = from.split('/')[0];
      if (folder !== 'vocabulary' && folder !== 'schemas') return [];
      const allowed = (t: string): boolean =>
        t.startsWith('vocabulary/') ||
        (folder === 'schemas' && (t.startsWith('schemas/') || LEAVES.includes(t)));
      return targets.filter((t) => !allowed(t)).map((t) => `${from} -> ${t}`);
    });
    expect(outside).to.deep.equal([]);
  });

  it('keeps the operator table below the conditions and the search that evaluate it', () => {
    const outside = [...graph.entries()].flatMap(([from, targets]) =>
      from.startsWith('operators/')
        ? targets
            .filter((t) => !t.startsWith('operators/') && !t.startsWith('vocabulary/') && t !== 'time.ts')
            .map((t) => `${from} -> ${t}`)
        : [],
    );
    expect(outside).to.deep.equal([]);
    expect(graph.get('policies/conditions.ts')).to.include('operators/table.ts');
    expect(graph.get('principals/search/evaluate.ts')).to.include('operators/table.ts');
  });

  it('finds a cycle when there is one', () => {
    const looped = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(cycles(looped)).to.deep.equal([['a.ts', 'b.ts', 'c.ts']]);
    const crossing = new Map([
      ['a/one.ts', ['b/two.ts']],
      ['b/two.ts', ['time.ts']],
      ['b/three.ts', ['a/four.ts']],
      ['a/four.ts', []],
      ['time.ts', []],
    ]);
    expect(cycles(crossing)).to.deep.equal([]);
    expect(cycles(folderGraph(crossing))).to.deep.equal([['a', 'b']]);
  });

  it('keeps the HTTP edge outermost: only the entry point imports from src/http', () => {
    const inward = [...graph.entries()].flatMap(([from, targets]) =>
      from.startsWith('http/') || from === 'main.ts'
        ? []
        : targets.filter((t) => t.startsWith('http/')).map((t) => `${from} -> ${t}`),
    );
    expect(inward).to.deep.equal([]);
  });

  it('keeps routes away from the database layer: they reach it through services', () => {
    const direct = [...graph.entries()].flatMap(([from, targets]) =>
      from.startsWith('http/')
        ? targets.filter((t) => t.startsWith('db/')).map((t) => `${from} -> ${t}`)
        : [],
    );
    expect(direct).to.deep.equal([]);
  });

  it("lets a feature's repository be imported only from its own folder and the wiring", () => {
    expect(foreignRepositoryImports(graph)).to.deep.equal([]);
  });

  it("finds an import of another feature's repository", () => {
    const modules = new Map([
      ['principals/service.ts', ['principals/repository.ts']],
      ['principals/search/plans.ts', ['principals/repository.ts']],
      ['scim/users.ts', ['principals/repository.ts', 'principals/writes.ts']],
      ['runtime.ts', ['principals/repository.ts']],
    ]);
    expect(foreignRepositoryImports(modules)).to.deep.equal(['scim/users.ts -> principals/repository.ts']);
  });

  it('keeps SCIM an adapter: only the HTTP edge and the wiring import it', () => {
    const inward = [...graph.entries()].flatMap(([from, targets]) =>
      from.startsWith('scim/') || from.startsWith('http/') || WIRING.includes(from)
        ? []
        : targets.filter((t) => t.startsWith('scim/')).map((t) => `${from} -> ${t}`),
    );
    expect(inward).to.deep.equal([]);
  });

  it('runs every query in a repository or in a module that owns its storage', () => {
    const found = [...graph.keys()].flatMap((file) =>
      queryUses(file, readFileSync(path.join(projectRoot(), 'src', file), 'utf8')),
    );
    expect(found).to.deep.equal([]);
  });

  it('finds a query run or declared outside a repository', () => {
    const source = [
      "const Q = defineQueries('things', ['get']);",
      'export async function get(db: Database) {',
      '  await this.db.first(Q.get, {});',
      '  await tx.run(Q.get);',
      '  await this.run(job);',
      '  await Promise.all([]);',
      '}',
    ].join('\n');
    expect(queryUses('things/service.ts', source)).to.deep.equal([
      'things/service.ts:1 declares queries',
      'things/service.ts:3 runs a query',
      'things/service.ts:4 runs a query',
    ]);
    expect(queryUses('things/repository.ts', source)).to.deep.equal([]);
    expect(queryUses('things/order-repository.ts', source)).to.have.length(3);
    expect(queryUses('jobs/runner.ts', source)).to.deep.equal([]);
  });
});

/** The wiring (`runtime.ts`) builds every feature: it alone may hand a repository to another. */
const WIRING = ['runtime.ts'];

/**
 * Imports of a feature's `repository.ts` from outside its folder: other features take the narrow
 * interface its owner exports (for principals, src/principals/writes.ts), never its queries.
 */
function foreignRepositoryImports(modules: Map<string, string[]>): string[] {
  /** The feature a module belongs to: its top-level folder under src/. */
  const folder = (file: string): string => file.split('/')[0]!;
  return [...modules.entries()].flatMap(([from, targets]) =>
    WIRING.includes(from)
      ? []
      : targets
          .filter((t) => path.basename(t) === 'repository.ts' && folder(t) !== folder(from))
          .map((t) => `${from} -> ${t}`),
  );
}

/**
 * Where queries may live: a feature's repository (`<feature>/repository.ts`), and the modules that
 * own their storage themselves: the database layer (driver, catalogue, migrations), the change
 * events (sink and feed), and the job runner.
 */
const STORAGE_OWNERS = ['db/', 'events/', 'jobs/'];
/** The names a database, a transaction or a session goes by wherever one is passed around. */
const RUNNERS = /^(tx|db|reader|database|session)$/i;

function queryUses(file: string, source: string): string[] {
  const name = path.basename(file);
  if (name === 'repository.ts') return [];
  if (STORAGE_OWNERS.some((prefix) => file.startsWith(prefix))) return [];
  if (!/defineQueries|\.(run|first)\b/.test(source)) return [];
  const tree = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const line = (node: ts.Node): number => tree.getLineAndCharacterOfPosition(node.getStart()).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (ts.isIdentifier(callee) && callee.text === 'defineQueries') {
        found.push(`${file}:${line(node)} declares queries`);
      }
      if (ts.isPropertyAccessExpression(callee) && ['run', 'first'].includes(callee.name.text)) {
        const receiver = callee.expression;
        const last = ts.isPropertyAccessExpression(receiver)
          ? receiver.name.text
          : ts.isIdentifier(receiver)
            ? receiver.text
            : '';
        if (RUNNERS.test(last)) found.push(`${file}:${line(node)} runs a query`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return found;
}
