import neo4j from 'neo4j-driver';

/** Empties the graph but keeps the schema and the record of applied migrations. */
export async function resetDatabaseAt(target: {
  uri: string;
  user: string;
  password: string;
}): Promise<void> {
  const driver = neo4j.driver(
    target.uri,
    target.password === '' ? undefined : neo4j.auth.basic(target.user, target.password),
    { logging: { level: 'error', logger: () => undefined } },
  );
  const session = driver.session();
  try {
    await session.run(
      'MATCH (n) WHERE NOT n:SchemaMigration CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS',
    );
  } finally {
    await session.close();
    await driver.close();
  }
}
