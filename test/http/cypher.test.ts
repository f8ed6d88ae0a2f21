import { expect } from 'chai';
import { cypher } from '../helpers/db.js';
import { Catalogue } from '../../src/db/catalogue.js';
import { loadMigrations, migrate, MigrationError } from '../../src/db/migrations.js';
import { useApp } from '../helpers/fixture.js';

describe('Cypher catalogue and schema on Neo4j', () => {
  const fx = useApp();

  it('every query file compiles (EXPLAIN)', async function () {
    // Planning the one principal search statement alone takes a few seconds.
    this.timeout(90_000);
    const catalogue = await Catalogue.load();
    const failures: string[] = [];
    for (const name of catalogue.names()) {
      try {
        await cypher(fx.app.runtime.db, `EXPLAIN ${catalogue.get(name)}`);
      } catch (err) {
        failures.push(`${name}: ${(err as Error).message.split('\n')[0]}`);
      }
    }
    expect(failures).to.deep.equal([]);
    expect(catalogue.names().length).to.be.greaterThan(2);
  });

  it('records each migration once and applies nothing on a second run', async () => {
    const migrations = await loadMigrations();
    expect(await migrate(fx.app.runtime.db, migrations)).to.deep.equal([]);
    const rows = await cypher(
      fx.app.runtime.db,
      'MATCH (m:SchemaMigration) RETURN m.version AS v ORDER BY v',
    );
    expect(rows.map((r) => r['v'])).to.deep.equal(migrations.map((m) => m.version));
  });

  it('refuses to start on a migration edited after it was applied', async () => {
    const migrations = await loadMigrations();
    const edited = migrations.map((m, i) => (i === 0 ? { ...m, checksum: 'edited' } : m));
    let error: unknown;
    try {
      await migrate(fx.app.runtime.db, edited);
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(MigrationError);
  });

  it('creates the constraints and indexes the migrations declare', async () => {
    // Names as the migrations leave them: created, less those a later migration drops.
    const declared = { CONSTRAINT: new Set<string>(), INDEX: new Set<string>() };
    const dropped = new Set<string>();
    for (const migration of await loadMigrations()) {
      for (const statement of migration.statements) {
        const created = /^\s*CREATE\s+(?:\w+\s+)?(CONSTRAINT|INDEX)\s+(\w+)/i.exec(statement);
        if (created) {
          declared[created[1]!.toUpperCase() as 'CONSTRAINT' | 'INDEX'].add(created[2]!);
          dropped.delete(created[2]!);
        }
        const drop = /^\s*DROP\s+(?:CONSTRAINT|INDEX)\s+(\w+)/i.exec(statement);
        if (drop) {
          declared.CONSTRAINT.delete(drop[1]!);
          declared.INDEX.delete(drop[1]!);
          dropped.add(drop[1]!);
        }
      }
    }
    expect(declared.CONSTRAINT.size, 'constraints parsed from cypher/schema').to.be.greaterThan(1);
    expect(declared.INDEX.size, 'indexes parsed from cypher/schema').to.be.greaterThan(1);
    expect(declared.CONSTRAINT).to.include('schema_migration_version');

    const names = async (show: string): Promise<string[]> =>
      (await cypher(fx.app.runtime.db, `${show} YIELD name RETURN collect(name) AS names`))[0]![
        'names'
      ] as string[];
    const constraints = await names('SHOW CONSTRAINTS');
    const indexes = await names('SHOW INDEXES');
    expect(
      [...declared.CONSTRAINT].filter((n) => !constraints.includes(n)),
      'missing constraints',
    ).to.deep.equal([]);
    expect(
      [...declared.INDEX].filter((n) => !indexes.includes(n)),
      'missing indexes',
    ).to.deep.equal([]);
    expect(
      [...dropped].filter((n) => constraints.includes(n) || indexes.includes(n)),
      'dropped, yet still there',
    ).to.deep.equal([]);
  });
});
