import type { Database } from '../../src/db/database.js';

/** Empties the graph but keeps the schema and the record of applied migrations. */
export async function resetDatabase(db: Database): Promise<void> {
  await db.runAutoCommit(
    'MATCH (n) WHERE NOT n:SchemaMigration CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS',
  );
}
