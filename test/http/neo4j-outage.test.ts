import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { LocalNeo4j } from '../../src/dev/local-neo4j.js';
import { edgeRoutes } from '../helpers/edge-routes.js';
import { useApp } from '../helpers/fixture.js';
import { eventually } from '../helpers/wait.js';

/**
 * Runs on a Neo4j of its own (the embedded one), which it stops and starts again under a
 * running service.
 */
describe('Neo4j outage and recovery', function () {
  this.timeout(180_000);
  let home: string;
  let neo4j: LocalNeo4j | undefined;
  const start = (port: number): Promise<LocalNeo4j> =>
    LocalNeo4j.start({ home, port, heap: '512m', pageCache: '64m', progress: () => undefined });

  // The database first: the app starts on it.
  before(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'pas-outage-'));
    neo4j = await start(0);
  });
  const fx = useApp({ neo4jUri: () => neo4j!.uri, extraRoutes: edgeRoutes(() => fx.app.runtime.db) });
  // And stopped once the app is closed.
  after(async () => {
    await neo4j?.stop();
    await rm(home, { recursive: true, force: true });
  });

  it('serves while the database is up', async () => {
    expect((await fx.http.get('/v1/_edge/db')).status).to.equal(200);
    expect((await fx.http.get('/readyz')).status).to.equal(200);
  });

  it('answers 503 UNAVAILABLE with Retry-After while it is down, and /readyz 503', async () => {
    await neo4j!.stop();
    const res = await fx.http.get('/v1/_edge/db');
    expect(res.status).to.equal(503);
    expect(res.body.code).to.equal('UNAVAILABLE');
    expect(res.headers.get('content-type')).to.match(/application\/problem\+json/);
    expect(Number(res.headers.get('retry-after'))).to.be.greaterThan(0);
    const ready = await fx.http.get('/readyz');
    expect(ready.status).to.equal(503);
    expect(ready.headers.get('retry-after')).to.match(/^\d+$/);
    // Once the outage is known, requests fail fast instead of waiting on connection timeouts.
    const began = Date.now();
    expect((await fx.http.get('/v1/_edge/db')).status).to.equal(503);
    expect(Date.now() - began).to.be.lessThan(1000);
    expect((await fx.http.get('/healthz')).status).to.equal(200);
    expect((await fx.http.get('/metrics')).text).to.match(/neo4j_up 0/);
  });

  it('recovers by itself, without a restart, once the database is back', async () => {
    // Its own outage first (a no-op when the database is already down).
    await neo4j!.stop();
    await eventually(
      async () => (await fx.http.get('/readyz')).status,
      (status) => status === 503,
      30_000,
    );
    neo4j = await start(neo4j!.port);
    await eventually(
      async () => (await fx.http.get('/readyz')).status,
      (status) => status === 200,
      30_000,
      250,
    );
    const { value: res } = await eventually(
      () => fx.http.get('/v1/_edge/db'),
      (r) => r.status === 200,
      30_000,
      250,
    );
    expect(res.body).to.deep.equal({ ok: 1 });
  });
});
