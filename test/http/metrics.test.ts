import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { freePort } from '../../src/dev/local-neo4j.js';
import { ADMIN, tokenFor } from '../helpers/auth.js';
import { resetDatabaseAt } from '../helpers/db.js';
import { useApp } from '../helpers/fixture.js';
import { HttpClient } from '../helpers/http.js';
import {
  killServiceProcesses,
  startServiceProcess,
  type ServiceProcess,
} from '../helpers/service-process.js';
import { namer } from '../helpers/engine.js';
import { Receiver } from '../helpers/receiver.js';
import { syncSnapshot } from '../helpers/sync.js';
import { eventually, metricValue } from '../helpers/wait.js';

const SCIM_USER = 'urn:ietf:params:scim:schemas:core:2.0:User';

/**
 * Who may scrape /metrics, and where: behind METRICS_TOKEN, and on a port of its own with
 * METRICS_PORT, for one process and for several (WORKERS=2, whose primary answers with the
 * metrics of every process).
 */

const TOKEN = 'metrics-token-0123456789abcdef';
/** As long as TOKEN, differing in its last character only. */
const NEAR_MISS = 'metrics-token-0123456789abcdeg';

const neo4jTarget = () => ({
  uri: process.env['NEO4J_URI']!,
  user: process.env['NEO4J_USER'] ?? 'neo4j',
  password: process.env['NEO4J_PASSWORD'] ?? '',
});

/** Expects the 401 of a scrape without the metrics token. */
function expectRefused(res: { status: number; headers: Headers; body: any }): void {
  expect(res.status).to.equal(401);
  expect(res.headers.get('content-type')).to.match(/^application\/problem\+json/);
  expect(res.headers.get('www-authenticate')).to.equal('Bearer realm="metrics"');
  expect(res.body).to.include({ status: 401, code: 'UNAUTHENTICATED', instance: '/metrics' });
  expect(res.body.detail).to.contain('METRICS_TOKEN');
}

describe('/metrics behind METRICS_TOKEN', () => {
  const fx = useApp({ env: { METRICS_TOKEN: TOKEN } });

  it('refuses a scrape without the token, with a wrong one, or with an access token: 401 with a Bearer challenge', async () => {
    expectRefused(await fx.http.get('/metrics'));
    expectRefused(await fx.http.get('/metrics', { headers: { Authorization: `Bearer ${NEAR_MISS}` } }));
    expectRefused(await fx.http.get('/metrics', { headers: { Authorization: `Basic ${TOKEN}` } }));
    expectRefused(await fx.http.get('/metrics', { headers: { Authorization: `Bearer ${TOKEN}x` } }));
    // The API's own tokens open the API, not the metrics.
    expectRefused(await fx.api.get('/metrics'));
  });

  it('answers a scrape with the token', async () => {
    const res = await fx.http.get('/metrics', { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/plain/);
    expect(res.text).to.match(/http_requests_total\{method="GET",route="\/metrics",status="401"\} [1-9]/);
  });

  it('documents the 401 in the OpenAPI document', async () => {
    const doc = (await fx.http.get('/v1/openapi.json')).body;
    expect(doc.paths['/metrics'].get.responses).to.have.property('401');
  });
});

describe('METRICS_PORT', function () {
  this.timeout(180_000);
  before(async () => {
    await resetDatabaseAt(neo4jTarget());
  });
  after(async () => {
    await killServiceProcesses();
  });

  /** Scrapes a metrics port. */
  const scrape = (port: number, token?: string) =>
    new HttpClient(`http://127.0.0.1:${port}`).get('/metrics', {
      headers: token ? { Authorization: `Bearer ${token}` } : {},
    });

  describe('one process', () => {
    let service: ServiceProcess;
    let metricsPort: number;
    before(async () => {
      metricsPort = await freePort();
      service = await startServiceProcess(neo4jTarget().uri, {
        METRICS_PORT: String(metricsPort),
        METRICS_TOKEN: TOKEN,
      });
    });
    after(async () => {
      await service?.stop(30_000);
    });

    it('serves /metrics there, behind the token, and not on the API port', async () => {
      await service.http.get('/healthz');
      const main = await service.http.get('/metrics', { headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(main.status).to.equal(404);
      expect(main.body.code).to.equal('NOT_FOUND');
      expectRefused(await scrape(metricsPort));
      expectRefused(await scrape(metricsPort, NEAR_MISS));
      const res = await scrape(metricsPort, TOKEN);
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/plain/);
      expect(res.text).to.match(/http_requests_total\{method="GET",route="\/healthz",status="200"\} [1-9]/);
      expect(res.text).to.match(/service_process_info\{slot="1",pid="\d+"\} 1/);
      expect(service.output()).to.contain(`metrics at http://127.0.0.1:${metricsPort}/metrics`);
    });

    it('answers nothing else there', async () => {
      const other = await new HttpClient(`http://127.0.0.1:${metricsPort}`).get('/v1/openapi.json');
      expect(other.status).to.equal(404);
      expect(other.body.code).to.equal('NOT_FOUND');
      const post = await new HttpClient(`http://127.0.0.1:${metricsPort}`).post('/metrics', {});
      expect(post.status).to.equal(405);
      expect(post.headers.get('allow')).to.equal('GET, HEAD');
    });
  });

  describe('several processes (WORKERS=2)', () => {
    let service: ServiceProcess;
    let metricsPort: number;
    before(async () => {
      metricsPort = await freePort();
      service = await startServiceProcess(neo4jTarget().uri, {
        WORKERS: '2',
        METRICS_PORT: String(metricsPort),
        METRICS_TOKEN: TOKEN,
      });
      // The primary listens there once every process is up.
      await eventually(
        async () => service.output(),
        (out) => out.includes('serving with 2 processes and a background process'),
        60_000,
        100,
      );
    });
    after(async () => {
      await service?.stop(30_000);
    });

    it('is served by the primary with the metrics of every process, each series labelled with its slot', async () => {
      const token = (await tokenFor(service.http, ADMIN)).access_token;
      expect((await service.http.withToken(token).get('/v1/principals')).status).to.equal(200);
      expect((await service.http.get('/metrics')).status).to.equal(404);
      expectRefused(await scrape(metricsPort));
      const res = await scrape(metricsPort, TOKEN);
      expect(res.status).to.equal(200);
      const slots = [...res.text.matchAll(/^service_process_info\{slot="(\d+)",pid="\d+"\} 1$/gm)].map(
        (m) => m[1],
      );
      expect(slots.sort(), res.text.slice(0, 2000)).to.deep.equal(['0', '1', '2']);
      expect(res.text).to.match(
        /^http_requests_total\{method="GET",route="\/v1\/principals",status="200",slot="[12]"\} 1$/m,
      );
      expect(res.text).to.match(/^neo4j_up\{slot="0"\} 1$/m);
      // The background process's own figures, which no scrape of the API port ever showed.
      expect(res.text).to.match(/^background_task_runs_total\{task="webhooks.dispatch",slot="0"\} [1-9]/m);
      const series = res.text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
      expect(series.filter((line, i) => series.indexOf(line) !== i)).to.deep.equal([]);
      for (const line of series) expect(line, line).to.match(/[{,]slot="\d+"[,}]/);
      // Every metric is described once.
      const types = res.text.split('\n').filter((line) => line.startsWith('# TYPE '));
      expect(types.filter((line, i) => types.indexOf(line) !== i)).to.deep.equal([]);
    });
  });
});

describe('what /metrics tells of the background work', () => {
  const receiver = new Receiver();
  const { uniq } = namer();
  before(() => receiver.start());
  const fx = useApp({ env: { WEBHOOKS_ALLOW_INSECURE_URLS: 'true', WEBHOOK_POLL_INTERVAL_MS: '50' } });
  after(() => receiver.stop());

  const value = (series: string): Promise<number> => metricValue(fx.app.http, series, 0);

  it('counts webhook deliveries by outcome, with their duration', async () => {
    const hook = await fx.api.post('/v1/webhooks', { url: receiver.url, events: ['principal.created'] });
    expect(hook.status, hook.text).to.equal(201);
    try {
      const before = {
        success: await value('webhook_deliveries_total{outcome="success"}'),
        failure: await value('webhook_deliveries_total{outcome="failure"}'),
        timed: await value('webhook_delivery_duration_seconds_count'),
      };
      receiver.reply = () => ({ status: 204 });
      await fx.api.post('/v1/principals', { type: 'SERVICE_ACCOUNT', name: uniq('delivered') });
      await eventually(
        () => value('webhook_deliveries_total{outcome="success"}'),
        (n) => n === before.success + 1,
        10_000,
      );
      receiver.reply = () => ({ status: 500 });
      await fx.api.post('/v1/principals', { type: 'SERVICE_ACCOUNT', name: uniq('refused') });
      await eventually(
        () => value('webhook_deliveries_total{outcome="failure"}'),
        (n) => n >= before.failure + 1,
        10_000,
      );
      expect(await value('webhook_delivery_duration_seconds_count')).to.be.at.least(before.timed + 2);
    } finally {
      receiver.reply = () => ({ status: 204 });
      await fx.api.delete(`/v1/webhooks/${hook.body.id}`);
    }
  });

  it('counts syncs by outcome, with their duration', async () => {
    const before = await value('connector_syncs_total{outcome="completed"}');
    const timed = await value('connector_sync_duration_seconds_count');
    const connector = await fx.api.post('/v1/connectors', { name: uniq('metrics-idp') });
    expect(connector.status, connector.text).to.equal(201);
    const user = { schemas: [SCIM_USER], userName: `${uniq('u')}@example.com`, active: true };
    await syncSnapshot(fx.api, connector.body.id, JSON.stringify(user));
    expect(await value('connector_syncs_total{outcome="completed"}')).to.equal(before + 1);
    expect(await value('connector_sync_duration_seconds_count')).to.equal(timed + 1);
  });

  it("says how long its event-loop thread ran, and how long it waited for a core the machine's other work held", async () => {
    const running = 'service_event_loop_thread_cpu_seconds_total';
    const waiting = 'service_event_loop_thread_cpu_wait_seconds_total';
    const types = (await fx.app.http.get('/metrics')).text;
    // Read from Linux's scheduler statistics: elsewhere neither series exists.
    if (process.platform !== 'linux') {
      expect(types).to.not.contain(running);
      expect(types).to.not.contain(waiting);
      return;
    }
    expect(types).to.match(new RegExp(`^# TYPE ${running} counter$`, 'm'));
    expect(types).to.match(new RegExp(`^# TYPE ${waiting} counter$`, 'm'));
    // This thread and two busy processes on one core, whatever the machine has: working
    // meanwhile, the thread waits its turn.
    const allowed = affinityOf(process.pid);
    const cpu = allowed.split(/[,-]/)[0]!;
    execFileSync('taskset', ['-c', '-p', cpu, String(process.pid)]);
    let busy: ChildProcess[] = [];
    try {
      busy = await busyProcesses(2, cpu);
      const before = { running: await value(running), waiting: await value(waiting) };
      for (const end = performance.now() + 400; performance.now() < end;);
      for (const child of busy) child.kill('SIGKILL');
      execFileSync('taskset', ['-c', '-p', allowed, String(process.pid)]);
      const ran = (await value(running)) - before.running;
      const waited = (await value(waiting)) - before.waiting;
      // 400 ms of wall time, shared between running and waiting (the process's other threads
      // count in neither): on a core shared three ways, it runs about a third of it.
      expect(ran).to.be.above(0.02).and.below(0.3);
      expect(waited, 'waited longer than it ran').to.be.above(ran);
      expect(ran + waited).to.be.at.least(0.3);
    } finally {
      for (const child of busy) child.kill('SIGKILL');
      execFileSync('taskset', ['-c', '-p', allowed, String(process.pid)]);
    }
  });

  it('says how far behind the store the decision index was when it last applied a change', async () => {
    await fx.api.post('/v1/principals', { type: 'SERVICE_ACCOUNT', name: uniq('lag') });
    const lag = await value('decision_index_lag_seconds');
    // Applied on this instance before the write answered: a fraction of a second, never negative.
    expect(lag).to.be.at.least(0).and.below(5);
    expect((await fx.app.http.get('/metrics')).text).to.match(/^# TYPE decision_index_lag_seconds gauge$/m);
  });
});

/** The CPUs thread `tid` may run on, as taskset lists them (`0,1`, `0-3`). */
function affinityOf(tid: number): string {
  const said = execFileSync('taskset', ['-c', '-p', String(tid)], { encoding: 'utf8' });
  return /list: (\S+)/.exec(said)![1]!;
}

/** `count` processes keeping CPU `cpu` busy, once every one of them runs. */
async function busyProcesses(count: number, cpu: string): Promise<ChildProcess[]> {
  const children = Array.from({ length: count }, () =>
    spawn('taskset', ['-c', cpu, process.execPath, '-e', "process.stdout.write('busy'); for (;;);"], {
      stdio: ['ignore', 'pipe', 'ignore'],
    }),
  );
  try {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve, reject) => {
            child.stdout.once('data', () => resolve());
            child.once('exit', () => reject(new Error('a busy process ended early')));
          }),
      ),
    );
  } catch (err) {
    for (const child of children) child.kill('SIGKILL');
    throw err;
  }
  return children;
}
