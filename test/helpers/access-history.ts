import type { TestApp } from './app.js';
import { cypher } from './db.js';

/**
 * Runs `work` while `holder` holds the access-history recorder's lease, as another instance
 * would: parts stored under that name are stored (only the holder's are). Then the lease is freed
 * and the app's own recorder, if it has one, takes it again at once.
 */
export async function holdingLease<T>(app: TestApp, holder: string, work: () => Promise<T>): Promise<T> {
  const { db } = app.runtime;
  await cypher(
    db,
    `MERGE (l:AccessHistoryLease {name: 'recorder'})
       ON CREATE SET l.began_at = datetime()
     SET l.holder = $holder, l.until = datetime() + duration('PT5M')`,
    { holder },
  );
  try {
    return await work();
  } finally {
    await cypher(db, `MATCH (l:AccessHistoryLease {name: 'recorder'}) SET l.holder = null, l.until = null`);
    await app.runtime.engine.recorder?.renew();
  }
}
