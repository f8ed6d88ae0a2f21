import { expect } from 'chai';
import { cypher } from '../helpers/db.js';
import { Catalogue } from '../../src/db/catalogue.js';
import { loadMigrations, migrate, MigrationError } from '../../src/db/migrations.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

describe('Cypher catalogue and schema on Neo4j', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => {
    await app.close();
  });

  it('every query file compiles (EXPLAIN)', async function () {
    // Planning the one principal search statement alone takes a few seconds.
    this.timeout(90_000);
    const catalogue = await Catalogue.load();
    const failures: string[] = [];
    for (const name of catalogue.names()) {
      try {
        await cypher(app.runtime.db, `EXPLAIN ${catalogue.get(name)}`);
      } catch (err) {
        failures.push(`${name}: ${(err as Error).message.split('\n')[0]}`);
      }
    }
    expect(failures).to.deep.equal([]);
    expect(catalogue.names().length).to.be.greaterThan(2);
  });

  it('records each migration once and applies nothing on a second run', async () => {
    const migrations = await loadMigrations();
    expect(await migrate(app.runtime.db, migrations)).to.deep.equal([]);
    const rows = await cypher(app.runtime.db, 'MATCH (m:SchemaMigration) RETURN m.version AS v ORDER BY v');
    expect(rows.map((r) => r['v'])).to.deep.equal(migrations.map((m) => m.version));
  });

  it('refuses to start on a migration edited after it was applied', async () => {
    const migrations = await loadMigrations();
    const edited = migrations.map((m, i) => (i === 0 ? { ...m, checksum: 'edited' } : m));
    let error: unknown;
    try {
      await migrate(app.runtime.db, edited);
    } catch (err) {
      error = err;
    }
    expect(error).to.be.instanceOf(MigrationError);
  });

  it('creates the constraints the migrations declare', async () => {
    const rows = await cypher(app.runtime.db, 'SHOW CONSTRAINTS YIELD name RETURN collect(name) AS names');
    expect(rows[0]!['names']).to.include('schema_migration_version');
  });
});
