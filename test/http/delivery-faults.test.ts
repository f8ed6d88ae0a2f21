import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { parse } from 'csv-parse/sync';
import neo4j, { type Driver } from 'neo4j-driver';
import { stripComments } from '../../src/db/catalogue.js';
import { fromNeo4j, toNeo4jParams } from '../../src/db/database.js';
import { LocalNeo4j } from '../../src/dev/local-neo4j.js';
import { newId } from '../../src/ids.js';
import { projectRoot } from '../../src/paths.js';
import { principalRows } from '../../src/principals/repository.js';
import type { SeedPrincipal } from '../../src/seed/bulk.js';
import { assessRisk } from '../../src/risk/score.js';
import { nowIso } from '../../src/time.js';
import { ADMIN, tokenFor } from '../helpers/auth.js';
import { resetDatabaseAt } from '../helpers/db.js';
import { useApp } from '../helpers/fixture.js';
import { honourRetryAfter, type HttpClient } from '../helpers/http.js';
import { Receiver, verifyDelivery } from '../helpers/receiver.js';
import {
  killServiceProcesses,
  startServiceProcess,
  type ServiceProcess,
} from '../helpers/service-process.js';
import { eventually } from '../helpers/wait.js';

/**
 * The outbox and the report jobs under the faults that at-least-once and "survives a restart"
 * (docs/api.md §6.2, §8) are about: the service killed outright in the middle of its work, and its
 * database going away under a stream of changes.
 *
 * The service killed outright runs as processes of its own (test/helpers/service-process.ts),
 * not through useApp: only a separate process can be ended by SIGKILL with nothing of its
 * shutdown running.
 */

const WEBHOOK_ENV = {
  WEBHOOKS_ALLOW_INSECURE_URLS: 'true',
  WEBHOOK_POLL_INTERVAL_MS: '50',
  WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1',
};

/** Short leases, so that a killed instance's webhook and jobs are taken over within seconds. */
const FAULT_ENV = {
  ...WEBHOOK_ENV,
  JOB_POLL_INTERVAL_MS: '100',
  JOB_LEASE_S: '2',
  // A webhook's lease covers a send still in flight: lease + timeout.
  WEBHOOK_TIMEOUT_MS: '2000',
};

/** The test's own connection to a Neo4j, to look at the graph (and write to it) behind the service. */
function connect(uri: string): Driver {
  const password = process.env['NEO4J_PASSWORD'] ?? '';
  return neo4j.driver(
    uri,
    password === '' ? undefined : neo4j.auth.basic(process.env['NEO4J_USER'] ?? 'neo4j', password),
    { disableLosslessIntegers: true, logging: { level: 'error', logger: () => undefined } },
  );
}

async function query(
  driver: Driver,
  text: string,
  params: Record<string, unknown> = {},
): Promise<Record<string, unknown>[]> {
  const session = driver.session();
  try {
    const result = await session.run(text, toNeo4jParams(params));
    return result.records.map((r) => fromNeo4j(r.toObject()) as Record<string, unknown>);
  } finally {
    await session.close();
  }
}

/**
 * Writes `count` AI agents straight into the graph with the statement of the bulk loader (the
 * node shape principals/create gives them, labels and card included), a few thousand per
 * transaction: through the API, a report-sized population would take minutes.
 */
async function insertPrincipals(driver: Driver, count: number): Promise<string[]> {
  const statement = stripComments(
    await readFile(path.join(projectRoot(), 'cypher/principals/create_many.cypher'), 'utf8'),
  );
  const ids: string[] = [];
  const createdAt = nowIso();
  const session = driver.session();
  try {
    for (let from = 0; from < count; from += 5_000) {
      const batch: SeedPrincipal[] = [];
      for (let i = from; i < Math.min(count, from + 5_000); i += 1) {
        const id = newId('principal');
        ids.push(id);
        batch.push({
          id,
          type: 'AI_AGENT',
          name: `bulk-agent-${i}`,
          attributes: {},
          metadata: {},
          createdAt,
        });
      }
      const params = toNeo4jParams(principalRows(batch, 'test', assessRisk));
      await session.executeWrite((tx) => tx.run(statement, params));
    }
  } finally {
    await session.close();
  }
  return ids;
}

/** Every audit event of a type, through the API (all pages). */
async function auditEvents(
  api: HttpClient,
  type: string,
): Promise<{ id: string; request_id: string | null; target: { id: string } }[]> {
  const out: { id: string; request_id: string | null; target: { id: string } }[] = [];
  for (let page = 1; ; page += 1) {
    const res = await api.get(`/v1/audit/events?type=${type}&limit=100&page=${page}`);
    expect(res.status, res.text).to.equal(200);
    out.push(...res.body.data);
    if (res.body.data.length < 100) return out;
  }
}

async function serviceToken(service: ServiceProcess): Promise<HttpClient> {
  return service.http.withToken((await tokenFor(service.http, ADMIN)).access_token);
}

describe('delivery under faults', function () {
  this.timeout(120_000);
  const neo4jUri = (): string => process.env['NEO4J_URI']!;

  describe('the service killed outright', () => {
    let driver: Driver;
    const receiver = new Receiver();

    before(async () => {
      driver = connect(neo4jUri());
      await receiver.start();
    });
    const reset = (): Promise<void> =>
      resetDatabaseAt({
        uri: neo4jUri(),
        user: process.env['NEO4J_USER'] ?? 'neo4j',
        password: process.env['NEO4J_PASSWORD'] ?? '',
      });

    beforeEach(async () => {
      // An empty store: the bootstrap admin client is created afresh by the first service.
      await reset();
      receiver.received.length = 0;
      receiver.reply = () => ({ status: 204 });
    });
    afterEach(async () => {
      await killServiceProcesses();
    });
    after(async () => {
      await killServiceProcesses();
      await receiver.stop();
      await driver?.close();
      // The report's principals would otherwise weigh on whatever runs next on this store.
      await reset();
    });

    it('SIGKILL mid-delivery: every committed event still arrives, signed, and nothing else', async () => {
      const first = await startServiceProcess(neo4jUri(), FAULT_ENV);
      let api = await serviceToken(first);
      // Slow answers keep deliveries in flight (the slowness is the scenario: the kill must catch
      // one), and the receiver says which are.
      receiver.reply = () => ({ status: 204, delayMs: 400 });
      const inFlight = receiver.unanswered;
      const created = await api.post('/v1/webhooks', { url: receiver.url, events: ['principal.created'] });
      expect(created.status, created.text).to.equal(201);
      const hook = created.body as { id: string; secret: string };
      const principals: string[] = [];
      for (let i = 0; i < 20; i += 1) {
        const res = await api.post('/v1/principals', { type: 'AI_AGENT', name: `delivered-${i}` });
        expect(res.status, res.text).to.equal(201);
        principals.push(res.body.id);
      }

      // Killed while a delivery is in flight, and before the outbox is through.
      await eventually(
        async () => ({
          inFlight: inFlight.size,
          arrived: new Set(receiver.received.map((r) => r.headers['webhook-id'])).size,
        }),
        (s) => s.inFlight > 0 && s.arrived >= 6,
        20_000,
        5,
      );
      const inFlightAtKill = [...inFlight].map((r) => String(r.headers['webhook-id']));
      const arrivedBeforeKill = new Set(receiver.received.map((r) => String(r.headers['webhook-id'])));
      const killedAt = Date.now();
      await first.crash();
      expect(await first.exited).to.equal('SIGKILL');
      expect(inFlightAtKill).to.have.length.greaterThan(0);
      expect(arrivedBeforeKill.size, 'deliveries left when the service was killed').to.be.lessThan(20);
      // The delivery cut off was never recorded: its entry is still in the outbox.
      const queued = await query(
        driver,
        'MATCH (m:WebhookMessage {webhook_id: $id}) RETURN collect(m.event_id) AS events',
        { id: hook.id },
      );
      expect(queued[0]!['events']).to.include.members(inFlightAtKill);

      // Another instance on the same store takes the webhook over once the dead one's lease runs out.
      const second = await startServiceProcess(neo4jUri(), FAULT_ENV);
      api = await serviceToken(second);
      const committed = await auditEvents(api, 'principal.created');
      expect(committed.map((e) => e.target.id).sort()).to.deep.equal([...principals].sort());
      const committedIds = new Set(committed.map((e) => e.id));
      await eventually(
        async () => new Set(receiver.received.map((r) => String(r.headers['webhook-id']))),
        (ids) => [...committedIds].every((id) => ids.has(id)),
        30_000,
        50,
      );
      for (const r of receiver.received) {
        const payload = verifyDelivery(hook.secret, r);
        expect(payload.type).to.equal('principal.created');
        expect(payload.data.id).to.equal(r.headers['webhook-id']);
        expect(committedIds.has(payload.data.id), `${payload.data.id} was committed`).to.equal(true);
      }
      // What was in flight at the kill was sent again after it.
      for (const id of inFlightAtKill) {
        const again = receiver.received.filter((r) => r.headers['webhook-id'] === id && r.at > killedAt);
        expect(again, `${id} sent again after the kill`).to.have.length.greaterThan(0);
      }
      // And the outbox empties: each delivery recorded once it succeeded, nothing sent forever.
      await eventually(
        async () => (await query(driver, 'MATCH (m:WebhookMessage) RETURN count(m) AS n'))[0]!['n'] as number,
        (n) => n === 0,
        10_000,
        100,
      );
      await second.stop();
    });

    it('SIGKILL mid-report: another instance completes it, every principal exactly once', async () => {
      const count = 20_000;
      // Written behind the service's back, before it starts: its decision index, which the
      // inventory reads, is built from the graph as it then is.
      const ids = await insertPrincipals(driver, count);
      const first = await startServiceProcess(neo4jUri(), FAULT_ENV);
      let api = await serviceToken(first);
      const requested = await api.post('/v1/audit/reports', { type: 'principal_inventory', format: 'csv' });
      expect(requested.status, requested.text).to.equal(202);
      const reportId = requested.body.id as string;

      const { value: midway } = await eventually(
        async () => (await api.get(`/v1/audit/reports/${reportId}`)).body,
        (r) => r.status !== 'pending' && (r.status !== 'running' || r.row_count > 0),
        30_000,
        10,
      );
      await first.crash();
      expect(midway, 'the report was seen part-way').to.include({ status: 'running' });
      expect(midway.row_count).to.be.greaterThan(0).and.lessThan(count);
      // Killed part-way: the store holds a running report with only some of its rows.
      const [stored] = await query(
        driver,
        'MATCH (r:Report {id: $id}) RETURN r.status AS status, r.row_count AS rows',
        { id: reportId },
      );
      expect(stored!['status']).to.equal('running');
      expect(stored!['rows']).to.be.lessThan(count);

      const second = await startServiceProcess(neo4jUri(), FAULT_ENV);
      api = await serviceToken(second);
      const { value: done } = await eventually(
        async () => (await api.get(`/v1/audit/reports/${reportId}`)).body,
        (r) => r.status === 'completed' || r.status === 'failed',
        60_000,
        100,
      );
      expect(done.status, JSON.stringify(done)).to.equal('completed');
      expect(done.row_count).to.equal(count);
      const content = await api.get(`/v1/audit/reports/${reportId}/content`);
      expect(content.status).to.equal(200);
      const rows = parse<Record<string, string>>(content.text, { columns: true });
      const written = rows.map((r) => r['id']!);
      expect(written).to.have.length(count);
      expect(new Set(written).size, 'no principal written twice').to.equal(count);
      expect([...written].sort()).to.deep.equal([...ids].sort());
      const announced = await api.get(`/v1/audit/events?type=report.completed&target_id=${reportId}`);
      expect(announced.body.data).to.have.length(1);
      await second.stop();
    });
  });

  describe('Neo4j restarted under a stream of changes', function () {
    this.timeout(180_000);
    let home: string;
    let database: LocalNeo4j | undefined;
    const receiver = new Receiver();
    const start = (port: number): Promise<LocalNeo4j> =>
      LocalNeo4j.start({ home, port, heap: '512m', pageCache: '64m', progress: () => undefined });

    // The database of this block first: the app starts on it.
    before(async () => {
      home = await mkdtemp(path.join(os.tmpdir(), 'pas-delivery-faults-'));
      database = await start(0);
      await receiver.start();
    });
    const fx = useApp({ neo4jUri: () => database!.uri, env: WEBHOOK_ENV });
    // And stopped once the app is closed.
    after(async () => {
      await database?.stop();
      await receiver.stop();
      await rm(home, { recursive: true, force: true });
    });

    it('loses no event and records none without its change', async () => {
      const api = fx.api;
      const created = await api.post('/v1/webhooks', { url: receiver.url, events: ['principal.created'] });
      expect(created.status, created.text).to.equal(201);
      const hook = created.body as { id: string; secret: string };

      interface Attempt {
        name: string;
        requestId: string;
        /** The answer's status; 0 when none came (the connection failed or timed out). */
        status: number;
        id?: string;
        sentAt: number;
        answeredAt: number;
      }
      const attempts: Attempt[] = [];
      const token = fx.token;
      let writing = true;
      // One creation after another, as a client feeding changes in; each carries its own request
      // id, which its audit event records, so that even a refused one can be looked for.
      const writer = (async () => {
        for (let i = 0; writing; i += 1) {
          let retryAfter: string | null = null;
          const attempt: Attempt = {
            name: `stream-${i}`,
            requestId: `delivery-faults-${randomUUID()}`,
            status: 0,
            sentAt: Date.now(),
            answeredAt: 0,
          };
          try {
            const res = await fetch(`${api.baseUrl}/v1/principals`, {
              method: 'POST',
              headers: {
                'Content-Type': 'application/json',
                Authorization: `Bearer ${token}`,
                'X-Request-Id': attempt.requestId,
              },
              body: JSON.stringify({ type: 'AI_AGENT', name: attempt.name }),
              signal: AbortSignal.timeout(20_000),
            });
            attempt.status = res.status;
            retryAfter = res.headers.get('retry-after');
            const body = (await res.json().catch(() => ({}))) as { id?: string };
            if (res.status === 201) attempt.id = body.id!;
          } catch {
            // No answer at all: the status stays 0, and the next write goes at once.
          }
          attempt.answeredAt = Date.now();
          attempts.push(attempt);
          // After a refused write, the next waits what the answer's Retry-After asks (at most a
          // second), as a client honouring it does.
          if (attempt.status !== 201) await honourRetryAfter(retryAfter, 1_000);
        }
      })();
      const acknowledged = (): number => attempts.filter((a) => a.status === 201).length;
      const refused = (): number => attempts.filter((a) => a.status !== 201).length;

      // When the database was going down: a write in flight then has an outcome of its own.
      const stopping = { began: 0, ended: 0 };
      try {
        await eventually(
          async () => acknowledged(),
          (n) => n >= 15,
          30_000,
          20,
        );
        stopping.began = Date.now();
        await database!.stop();
        stopping.ended = Date.now();
        const refusedBefore = refused();
        await eventually(
          async () => refused(),
          (n) => n >= refusedBefore + 5,
          30_000,
          20,
        );
        const acknowledgedBefore = acknowledged();
        database = await start(database!.port);
        await eventually(
          async () => acknowledged(),
          (n) => n >= acknowledgedBefore + 10,
          60_000,
          50,
        );
      } finally {
        writing = false;
        await writer;
      }
      const outage = attempts.filter((a) => a.status !== 201);
      expect(outage.length, 'writes refused during the outage').to.be.greaterThan(0);
      for (const a of outage) expect([0, 503], `${a.name}: ${a.status}`).to.include(a.status);

      // No change without its event, no event without its change.
      const events = await auditEvents(api, 'principal.created');
      const driver = connect(database.uri);
      const principals = await query(driver, 'MATCH (p:Principal) RETURN p.id AS id, p.name AS name').finally(
        () => driver.close(),
      );
      const byName = new Map<string, string[]>();
      for (const p of principals) {
        byName.set(p['name'] as string, [...(byName.get(p['name'] as string) ?? []), p['id'] as string]);
      }
      const principalIds = new Set(principals.map((p) => p['id'] as string));
      const requestIds = new Set(attempts.map((a) => a.requestId));
      for (const e of events) {
        expect(principalIds.has(e.target.id), `the principal of ${e.id} exists`).to.equal(true);
        expect(requestIds.has(e.request_id!), `${e.id} comes from a request of the writer`).to.equal(true);
      }
      for (const a of attempts) {
        const made = byName.get(a.name) ?? [];
        const recorded = events.filter((e) => e.request_id === a.requestId).map((e) => e.target.id);
        // Applied once at most, and never half: the principal exactly when its event.
        expect(made.length, `${a.name} created at most once`).to.be.at.most(1);
        expect(recorded, `the events of ${a.name}`).to.deep.equal(made);
        if (a.status === 201) {
          expect(made, `${a.name} acknowledged`).to.deep.equal([a.id]);
        } else if (a.answeredAt < stopping.began || a.sentAt > stopping.ended) {
          expect(made, `${a.name} refused with ${a.status}`).to.deep.equal([]);
        }
        // A write still in flight while the database went down may have committed without the
        // service hearing of it; of that one only the above (once, never half) can be asked.
      }

      // And every event reaches the receiver.
      const eventIds = new Set(events.map((e) => e.id));
      await eventually(
        async () => new Set(receiver.received.map((r) => String(r.headers['webhook-id']))),
        (got) => [...eventIds].every((id) => got.has(id)),
        45_000,
        100,
      );
      for (const r of receiver.received) {
        const payload = verifyDelivery(hook.secret, r);
        expect(eventIds.has(payload.data.id), `${payload.data.id} was committed`).to.equal(true);
      }
    });
  });
});
