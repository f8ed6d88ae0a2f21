import neo4j from 'neo4j-driver';
import { fromNeo4j, toNeo4jParams, type Database, type Row } from '../../src/db/database.js';

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

/** Runs any Cypher statement in its own transaction, as a test's own look into (or change of) the graph. */
export async function cypher(
  db: Database,
  text: string,
  params: Record<string, unknown> = {},
): Promise<Row[]> {
  const session = db.driver.session();
  try {
    const result = await session.run(text, toNeo4jParams(params));
    return result.records.map((r) => fromNeo4j(r.toObject()) as Row);
  } finally {
    await session.close();
  }
}

/** One operator of an executed query plan, with the rows it produced. */
export interface PlanOperator {
  operator: string;
  rows: number;
}

interface PlanStep {
  operatorType: string;
  rows?: number;
  children: PlanStep[];
}

/**
 * Runs a read statement under PROFILE and lists the operators of its executed plan, depth first:
 * how tests check that a query is served by an index.
 */
export async function profile(
  db: Database,
  text: string,
  params: Record<string, unknown> = {},
): Promise<PlanOperator[]> {
  const session = db.driver.session({ defaultAccessMode: neo4j.session.READ });
  try {
    const result = await session.run(`PROFILE ${text}`, toNeo4jParams(params));
    const operators: PlanOperator[] = [];
    const walk = (step: PlanStep): void => {
      operators.push({ operator: step.operatorType.replace(/@.*$/, ''), rows: step.rows ?? 0 });
      step.children.forEach(walk);
    };
    const plan: PlanStep | false = result.summary.profile || result.summary.plan;
    if (plan) walk(plan);
    return operators;
  } finally {
    await session.close();
  }
}
