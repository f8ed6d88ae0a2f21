import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import {
  Catalogue,
  CatalogueError,
  defaultCypherDir,
  requiredQueryNames,
  stripComments,
} from '../../src/db/catalogue.js';
// Every module that declares queries: the service's (through its wiring) and the bulk loader.
import '../../src/runtime.js';
import '../../src/seed/bulk.js';
import { loadMigrations } from '../../src/db/migrations.js';

describe('cypher catalogue', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'pas-cypher-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('strips line comments but not // inside string literals', () => {
    const text = "// heading\nMATCH (n) // trailing\nWHERE n.url = 'http://x' // c\nRETURN n\n";
    expect(stripComments(text)).to.equal("MATCH (n)\nWHERE n.url = 'http://x'\nRETURN n");
  });

  it('loads the real catalogue with every declared query present', async () => {
    const catalogue = await Catalogue.load();
    expect(catalogue.names()).to.include('system/ping');
  });

  it('has no query file that no module declares', () => {
    const root = defaultCypherDir();
    const files: string[] = [];
    const walk = (rel: string): void => {
      for (const entry of readdirSync(path.join(root, rel), { withFileTypes: true })) {
        const relPath = rel ? `${rel}/${entry.name}` : entry.name;
        if (entry.isDirectory()) walk(relPath);
        else if (entry.name.endsWith('.cypher')) files.push(relPath.slice(0, -'.cypher'.length));
      }
    };
    walk('');
    const declared = new Set(requiredQueryNames());
    // Migrations are read by number (src/db/migrations.ts), not declared.
    expect(files.filter((f) => !f.startsWith('schema/') && !declared.has(f))).to.deep.equal([]);
    expect(files.length).to.be.greaterThan(100);
  });

  it('fails when a declared query has no file', async () => {
    await mkdir(path.join(dir, 'zz_test_only'));
    let error: unknown;
    try {
      await Catalogue.load(dir, ['zz_test_only/absent']);
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(CatalogueError);
    expect(String(error)).to.contain('cypher/zz_test_only/absent.cypher');
  });

  it('refuses empty files and files with several statements', async () => {
    await mkdir(path.join(dir, 'zz_test_only'));
    await writeFile(path.join(dir, 'zz_test_only', 'absent.cypher'), 'RETURN 1');
    await writeFile(path.join(dir, 'two.cypher'), 'RETURN 1;\nRETURN 2');
    let error: unknown;
    try {
      await Catalogue.load(dir);
    } catch (err) {
      error = err;
    }
    expect(String(error)).to.contain('more than one statement');
    await writeFile(path.join(dir, 'two.cypher'), '// only a comment\n');
    error = undefined;
    try {
      await Catalogue.load(dir);
    } catch (err) {
      error = err;
    }
    expect(String(error)).to.contain('is empty');
  });

  it('reads numbered migrations and refuses badly named ones', async () => {
    await writeFile(
      path.join(dir, '001_first.cypher'),
      'CREATE INDEX a IF NOT EXISTS FOR (n:A) ON (n.x);\nCREATE INDEX b IF NOT EXISTS FOR (n:B) ON (n.y);\n',
    );
    const migrations = await loadMigrations(dir);
    expect(migrations).to.have.length(1);
    expect(migrations[0]!.statements).to.have.length(2);
    await writeFile(path.join(dir, 'second.cypher'), 'RETURN 1');
    let error: unknown;
    try {
      await loadMigrations(dir);
    } catch (err) {
      error = err;
    }
    expect(String(error)).to.contain('NNN_name.cypher');
  });
});
