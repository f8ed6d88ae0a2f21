import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { defaultCypherDir, defineQueries, stripComments } from './catalogue.js';
import type { Database } from './database.js';

const Q = defineQueries('system', ['migration_list', 'migration_record']);

export interface Migration {
  version: number;
  name: string;
  checksum: string;
  statements: string[];
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

const FILE_PATTERN = /^(\d{3})_([a-z0-9_]+)\.cypher$/;

/** Reads `cypher/schema/NNN_name.cypher`: statements separated by `;` at the end of a line. */
export async function loadMigrations(dir = path.join(defaultCypherDir(), 'schema')): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.cypher')).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const match = FILE_PATTERN.exec(file);
    if (!match) throw new MigrationError(`cypher/schema/${file} is not named NNN_name.cypher`);
    const text = await readFile(path.join(dir, file), 'utf8');
    const statements = stripComments(text)
      .split(/;\s*(?:\n|$)/)
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
    if (statements.length === 0) throw new MigrationError(`cypher/schema/${file} has no statements`);
    const version = Number(match[1]);
    if (migrations.some((m) => m.version === version)) {
      throw new MigrationError(`two migrations share version ${match[1]}`);
    }
    migrations.push({
      version,
      name: match[2]!,
      checksum: createHash('sha256').update(text).digest('hex'),
      statements,
    });
  }
  return migrations;
}

/**
 * Applies the migrations not yet recorded in the graph, in order. Every statement is idempotent
 * (`IF NOT EXISTS`), so two instances starting together do no harm; a recorded migration whose
 * file has since changed stops the start, because the schema would silently diverge.
 */
export async function migrate(db: Database, migrations: Migration[]): Promise<number[]> {
  const applied = new Map<number, string>();
  try {
    const rows = await db.run<{ version: number; checksum: string }>(Q.migration_list);
    for (const row of rows) applied.set(row.version, row.checksum);
  } catch (err) {
    throw err instanceof Error ? err : new MigrationError(String(err));
  }
  const done: number[] = [];
  for (const migration of migrations) {
    const recorded = applied.get(migration.version);
    if (recorded !== undefined) {
      if (recorded !== migration.checksum) {
        throw new MigrationError(
          `migration ${migration.version}_${migration.name} changed after it was applied; add a new migration instead`,
        );
      }
      continue;
    }
    for (const statement of migration.statements) {
      await db.schema(statement);
    }
    await db.write('system/migration_record', (tx) =>
      tx.run(Q.migration_record, {
        version: migration.version,
        name: migration.name,
        checksum: migration.checksum,
      }),
    );
    done.push(migration.version);
  }
  if (done.length > 0) await db.schema('CALL db.awaitIndexes(300)');
  return done;
}
