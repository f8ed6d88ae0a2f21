import http from 'node:http';
import { expect } from 'chai';
import { ADMIN, tokenFor } from '../helpers/auth.js';
import { resetDatabaseAt } from '../helpers/db.js';
import {
  killServiceProcesses,
  startServiceProcess,
  type ServiceProcess,
} from '../helpers/service-process.js';
import { eventually } from '../helpers/wait.js';

/**
 * The service as `WORKERS=2` runs it: a primary, two serving processes sharing one port and a
 * background process (`BACKGROUND_PROCESS` is on by default with several serving processes). Every
 * request here goes on a connection of its own, so that the primary hands them to both processes.
 * It runs `src/main.ts` as a process (test/helpers/service-process.ts), not through useApp: the
 * primary forks its serving processes, which an app inside the test process cannot do.
 */

const neo4jTarget = () => ({
  uri: process.env['NEO4J_URI']!,
  user: process.env['NEO4J_USER'] ?? 'neo4j',
  password: process.env['NEO4J_PASSWORD'] ?? '',
});

interface Answer {
  status: number;
  body: any;
  text: string;
}

/** One request on a new connection (no keep-alive); rejects when no answer comes back at all. */
function once(
  port: number,
  method: string,
  path: string,
  options: { token?: string; body?: unknown } = {},
): Promise<Answer> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: {
          ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}),
          ...(body ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let parsed: unknown;
          try {
            parsed = text === '' ? undefined : JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, text });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`${method} ${path}: no answer within 10 s`)));
    req.end(body);
  });
}

/** The primary's log lines (JSON) saying which process of which slot started. */
function startedProcesses(
  service: ServiceProcess,
  kind: 'serving' | 'background' = 'serving',
): { slot: number; pid: number }[] {
  return service
    .output()
    .split('\n')
    .filter((line) => line.includes(`"${kind} process started"`))
    .map((line) => JSON.parse(line) as { slot: number; pid: number });
}

/** The process that answered a scrape of /metrics: its slot and pid. */
async function scrapedBy(port: number): Promise<string> {
  return (await scrape(port)).by;
}

/** A scrape of /metrics, with the slot and pid of the process that answered it. */
async function scrape(port: number): Promise<{ by: string; text: string }> {
  const res = await once(port, 'GET', '/metrics');
  const match = /service_process_info\{slot="(\d+)",pid="(\d+)"\} 1/.exec(res.text);
  if (!match) throw new Error(`no service_process_info in /metrics:\n${res.text.slice(0, 500)}`);
  return { by: `${match[1]}:${match[2]}`, text: res.text };
}

/**
 * The service as a process of its own with `env`, on an emptied database, once its output says
 * `ready` (every process it starts is up), with an admin token.
 */
async function startOnFreshDatabase(
  env: Record<string, string>,
  ready: string,
): Promise<{ service: ServiceProcess; token: string }> {
  await resetDatabaseAt(neo4jTarget());
  const service = await startServiceProcess(neo4jTarget().uri, env);
  await eventually(
    async () => service.output(),
    (out) => out.includes(ready),
    60_000,
    100,
  );
  return { service, token: (await tokenFor(service.http, ADMIN)).access_token };
}

async function stopAll(service: ServiceProcess | undefined): Promise<void> {
  await service?.stop(30_000);
  await killServiceProcesses();
}

describe('several serving processes (WORKERS=2)', function () {
  this.timeout(180_000);
  let service: ServiceProcess;
  let token: string;

  before(async () => {
    ({ service, token } = await startOnFreshDatabase(
      {
        WORKERS: '2',
        LOG_LEVEL: 'info',
        RATE_LIMIT_DECISIONS: '40',
        // Short windows: the decisions of the stop under load are not refused for those counted before.
        RATE_LIMIT_WINDOW_S: '10',
        DECISION_FLUSH_INTERVAL_MS: '200',
        // Jobs are looked for once a minute: a report done sooner was woken by the serving process.
        JOB_POLL_INTERVAL_MS: '60000',
      },
      'serving with 2 processes and a background process',
    ));
  });
  after(() => stopAll(service));

  it('answers from each of its processes on one port', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 40 && seen.size < 2; i += 1) seen.add(await scrapedBy(service.port));
    expect([...seen].map((s) => s.split(':')[0]).sort()).to.deep.equal(['1', '2']);
  });

  it('runs reports, webhook deliveries and the access history in the background process alone, and replaces it when it dies', async () => {
    /** A report queued through a serving process: done within seconds, not at the next minute's poll. */
    const report = async (): Promise<void> => {
      const res = await once(service.port, 'POST', '/v1/audit/reports', {
        token,
        body: { type: 'principal_inventory', format: 'csv' },
      });
      expect(res.status, res.text).to.equal(202);
      const { value } = await eventually(
        async () => (await once(service.port, 'GET', `/v1/audit/reports/${res.body.id}`, { token })).body,
        (r) => r.status === 'completed' || r.status === 'failed',
        20_000,
        100,
      );
      expect(value.status, JSON.stringify(value)).to.equal('completed');
    };
    const [background] = startedProcesses(service, 'background');
    expect(background, service.output().slice(-2000)).to.include({ slot: 0 });
    await report();

    // Neither serving process delivers webhooks or runs a lease task; each keeps its own records.
    const scrapes = new Map<string, string>();
    for (let i = 0; i < 40 && scrapes.size < 2; i += 1) {
      const { by, text } = await scrape(service.port);
      scrapes.set(by.split(':')[0]!, text);
    }
    expect([...scrapes.keys()].sort()).to.deep.equal(['1', '2']);
    for (const text of scrapes.values()) {
      expect(text).to.match(/background_task_runs_total\{task="events.poll"\} [1-9]/);
      expect(text).not.to.match(/background_task_runs_total\{task="webhooks.dispatch"\}/);
      expect(text).not.to.match(/background_task_runs_total\{task="access_history.record"\}/);
    }

    // A background process that dies is replaced, and the next report is run by its successor.
    process.kill(background!.pid, 'SIGKILL');
    await eventually(
      async () => startedProcesses(service, 'background').find((p) => p.pid !== background!.pid),
      (started) => started !== undefined,
      60_000,
      200,
    );
    await report();
  });

  it('counts a rate limit once across its processes', async () => {
    const request = {
      principal_id: 'prn_01JD0000000000000000000000',
      action: 'read',
      resource: { type: 'db', identifier: 'x' },
    };
    const statuses: number[] = [];
    for (let i = 0; i < 60; i += 1) {
      statuses.push(
        (await once(service.port, 'POST', '/v1/decisions/evaluate', { token, body: request })).status,
      );
    }
    expect(
      statuses.filter((s) => s === 200),
      'allowed: the limit of 40, not 40 per process',
    ).to.have.length(40);
    expect(statuses.filter((s) => s === 429)).to.have.length(20);
  });

  it('replaces a process that dies, losing no write it acknowledged', async () => {
    const victim = startedProcesses(service).find((p) => p.slot === 2)!;
    expect(victim, 'slot 2 started').to.not.equal(undefined);
    const acknowledged: string[] = [];
    let refused = 0;
    let killed = false;
    for (let i = 0; i < 120; i += 1) {
      if (i === 20) {
        process.kill(victim.pid, 'SIGKILL');
        killed = true;
      }
      try {
        const res = await once(service.port, 'POST', '/v1/principals', {
          token,
          body: { type: 'SERVICE_ACCOUNT', name: `survivor-${i}` },
        });
        if (res.status === 201) acknowledged.push(res.body.id as string);
        else refused += 1;
      } catch {
        // No answer: the connection went to the process as it died. Not acknowledged.
      }
    }
    expect(killed).to.equal(true);
    expect(refused, 'every answer given was a success').to.equal(0);
    expect(acknowledged.length).to.be.greaterThan(100);
    // The primary starts another process in slot 2, which serves.
    const { value: replacement } = await eventually(
      async () => startedProcesses(service).find((p) => p.slot === 2 && p.pid !== victim.pid),
      (started) => started !== undefined,
      60_000,
      200,
    );
    const seen = new Set<string>();
    await eventually(
      async () => seen.add(await scrapedBy(service.port)),
      () => seen.has(`2:${replacement!.pid}`),
      60_000,
      50,
    );
    for (const id of acknowledged) {
      const res = await once(service.port, 'GET', `/v1/principals/${id}`, { token });
      expect(res.status, `${id} after the process that may have written it died`).to.equal(200);
    }
  });

  it('drains every process at a graceful stop under load: each acknowledged write and decision kept', async () => {
    const decisions: string[] = [];
    const principals: string[] = [];
    let going = true;
    const load = (async () => {
      for (let i = 0; going; i += 1) {
        try {
          const res =
            i % 2 === 0
              ? await once(service.port, 'POST', '/v1/principals', {
                  token,
                  body: { type: 'SERVICE_ACCOUNT', name: `drained-${i}` },
                })
              : await once(service.port, 'POST', '/v1/decisions/evaluate', {
                  token,
                  body: {
                    principal_id: 'prn_01JD0000000000000000000000',
                    action: 'write',
                    resource: { type: 'db', identifier: `d-${i}` },
                  },
                });
          if (res.status === 201) principals.push(res.body.id as string);
          else if (res.status === 200) decisions.push(res.body.id as string);
        } catch {
          // Refused: the processes have stopped listening, the stop is under way.
          break;
        }
      }
    })();
    // Under way: both kinds of request answered before the stop begins.
    await eventually(
      async () => Math.min(principals.length, decisions.length),
      (answered) => answered >= 10,
      30_000,
      20,
    );
    const stopping = service.stop(60_000);
    expect(await service.exited).to.equal(0);
    going = false;
    await Promise.all([stopping, load]);
    expect(principals.length + decisions.length, service.output().slice(-3000)).to.be.greaterThan(10);
    expect(service.output()).to.include('"stopped"');

    // Everything acknowledged is in the database, read by a service started afresh on it.
    service = await startServiceProcess(neo4jTarget().uri, { WORKERS: '1' });
    token = (await tokenFor(service.http, ADMIN)).access_token;
    for (const id of principals) {
      expect((await once(service.port, 'GET', `/v1/principals/${id}`, { token })).status, id).to.equal(200);
    }
    for (const id of decisions) {
      const res = await once(service.port, 'GET', `/v1/decisions/${id}`, { token });
      expect(res.status, `decision ${id} recorded`).to.equal(200);
    }
  });
});

describe('a serving process beside a background process, without Redis', function () {
  this.timeout(120_000);
  let service: ServiceProcess;
  let token: string;

  before(async () => {
    // The feed's poll once a minute: what the background process hears sooner came through the primary.
    ({ service, token } = await startOnFreshDatabase(
      { WORKERS: '1', BACKGROUND_PROCESS: 'on', EVENT_POLL_INTERVAL_MS: '60000' },
      'background process ready',
    ));
  });
  after(() => stopAll(service));

  it('has the background process hear a change the serving process committed at once', async () => {
    const call = async (method: string, path: string, body?: unknown): Promise<any> => {
      const res = await once(service.port, method, path, { token, ...(body ? { body } : {}) });
      expect(res.status, res.text).to.be.oneOf([200, 201]);
      return res.body;
    };
    const principal = await call('POST', '/v1/principals', { type: 'SERVICE_ACCOUNT', name: 'relay-agent' });
    const policy = await call('POST', '/v1/policies', {
      name: 'relay-policy',
      effect: 'allow',
      actions: ['read'],
      subjects: { principals: [principal.id] },
      resources: [{ type: 'doc', identifier: 'relay' }],
    });
    const [created] = (await call('GET', `/v1/audit/events?type=policy.created&target_id=${policy.id}`)).data;
    // Its access change is computed and stored by the background process, which heard of it well
    // before its next poll.
    const { value } = await eventually(
      async () => (await call('GET', `/v1/access-changes?event_id=${created.id}`)).data,
      (changes: unknown[]) => changes.length > 0,
      20_000,
      200,
    );
    expect(value.map((c: any) => [c.principal.id, c.resource.identifier, c.actions_gained])).to.deep.equal([
      [principal.id, 'relay', ['read']],
    ]);
  });
});
