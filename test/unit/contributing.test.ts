import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/paths.js';

/**
 * docs/contributing.md lists, for each kind of change, the files it touches. A list that names a
 * file or a symbol the code no longer has would send a newcomer astray, so every path it quotes
 * must exist, and every "`NAME` in `file`" it says must be found in that file.
 */
describe('docs/contributing.md', () => {
  const root = projectRoot();
  const text = readFileSync(path.join(root, 'docs/contributing.md'), 'utf8');

  it('quotes only paths that exist', () => {
    const quoted = [...text.matchAll(/`((?:src|cypher|test|bench|tools|console)\/[^`\s]*)`/g)].map(
      (m) => m[1]!,
    );
    // `<feature>`, `<name>` and globs stand for any file: the folder before them must exist.
    const concrete = quoted.map((p) =>
      /[<*]/.test(p) ? p.slice(0, p.search(/[<*]/)).replace(/[^/]*$/, '') : p,
    );
    expect(quoted.length).to.be.greaterThan(30);
    expect(concrete.filter((p) => !existsSync(path.join(root, p)))).to.deep.equal([]);
  });

  it('names symbols where they are', () => {
    const said: { symbol: string; file: string }[] = [];
    // "`A` in `file`", "`A` or `B` in `file`"
    for (const m of text.matchAll(/((?:`[A-Za-z_]\w*`(?:,| or| and)? ?)+) in `((?:src|test)\/[^`\s<]+)`/g)) {
      for (const symbol of m[1]!.matchAll(/`(\w+)`/g)) said.push({ symbol: symbol[1]!, file: m[2]! });
    }
    // "`file` (`A`)"
    for (const m of text.matchAll(/`((?:src|test)\/[^`\s<]+)` \(`([A-Za-z_]\w*)`\)/g)) {
      said.push({ symbol: m[2]!, file: m[1]! });
    }
    expect(said.length).to.be.greaterThan(3);
    const missing = said.filter(
      ({ symbol, file }) => !readFileSync(path.join(root, file), 'utf8').includes(symbol),
    );
    expect(missing).to.deep.equal([]);
  });
});
