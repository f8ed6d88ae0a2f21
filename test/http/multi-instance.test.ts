import { expect } from 'chai';
import { parse } from 'csv-parse/sync';
import type { Redis } from 'ioredis';
import { ADMIN, tokenFor } from '../helpers/auth.js';
import { resetDatabaseAt } from '../helpers/db.js';
import { HttpClient, honourRetryAfter, type HttpResponse, type RequestOptions } from '../helpers/http.js';
import { Receiver, verifyDelivery } from '../helpers/receiver.js';
import { connectTestRedis, needsRedis, testRedisUrl } from '../helpers/redis.js';
import { RoundRobinProxy } from '../helpers/round-robin-proxy.js';
import {
  killServiceProcesses,
  startServiceProcess,
  type ServiceProcess,
} from '../helpers/service-process.js';
import { eventually, instanceRuns } from '../helpers/wait.js';

/**
 * Three instances of the service on one Neo4j and one Redis, as a deployment runs them: each its
 * own process, behind a round-robin proxy, under a mixed load of writes, searches, decisions and
 * webhook deliveries. What a client sees must not depend on which instance answers it.
 *
 * The instances are processes of their own (test/helpers/service-process.ts), not apps started
 * through useApp: one of them is killed outright mid-load, which only a separate process allows.
 */

needsRedis();
/** Names this run in Redis (channel, counters) and in the names it gives, apart from any other run. */
const RUN = `${process.pid}-${Date.now().toString(36)}`;
const TOKEN_HEADER = 'Consistency-Token';

/** What every instance of a set shares besides the store: Redis for announcements, counters and leases. */
function sharedEnv(extra: Record<string, string>): Record<string, string> {
  return {
    LOG_LEVEL: 'warn',
    REDIS_URL: testRedisUrl(),
    EVENTS_CHANNEL: `test:events:multi:${RUN}`,
    RATE_LIMIT_KEY_PREFIX: `test:rl:multi:${RUN}`,
    WEBHOOKS_ALLOW_INSECURE_URLS: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '50',
    WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1',
    // Instances look for due jobs often, so that they compete for each report.
    JOB_POLL_INTERVAL_MS: '100',
    ...extra,
  };
}

const neo4jTarget = () => ({
  uri: process.env['NEO4J_URI']!,
  user: process.env['NEO4J_USER'] ?? 'neo4j',
  password: process.env['NEO4J_PASSWORD'] ?? '',
});

async function deleteKeys(redis: Redis, pattern: string): Promise<void> {
  const keys = await redis.keys(pattern);
  if (keys.length > 0) await redis.del(...keys);
}

/**
 * Three instances on an emptied store: the first creates the bootstrap admin client and the
 * signing key, the other two start beside it once it is up.
 */
async function startThree(env: Record<string, string>): Promise<ServiceProcess[]> {
  await resetDatabaseAt(neo4jTarget());
  const first = await startServiceProcess(neo4jTarget().uri, env);
  const others = await Promise.all([
    startServiceProcess(neo4jTarget().uri, env),
    startServiceProcess(neo4jTarget().uri, env),
  ]);
  return [first, ...others];
}

/** The consistency token a request sends back, when there is one to send. */
const consistent = (token: string | null | undefined): { headers: Record<string, string> } =>
  token ? { headers: { [TOKEN_HEADER]: token } } : { headers: {} };

const tokenOf = (res: HttpResponse): string | null => res.headers.get(TOKEN_HEADER);

/**
 * A client that does what a `503` with `Retry-After` to a request carrying a consistency token
 * asks (docs/api.md, Consistency tokens: the instance could not catch up in time, the request did
 * nothing): it sends the request again, a few times at most. Every other answer is returned as is.
 */
class ConsistentClient extends HttpClient {
  override async request<T = any>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<HttpResponse<T>> {
    const withToken = Object.keys(options.headers ?? {}).some(
      (h) => h.toLowerCase() === TOKEN_HEADER.toLowerCase(),
    );
    for (let attempt = 1; ; attempt += 1) {
      const res = await super.request<T>(method, path, options);
      const retryAfter = res.headers.get('retry-after');
      if (!withToken || res.status !== 503 || !(Number(retryAfter) >= 0) || attempt === 3) return res;
      // What the 503 asks, at most a second.
      await honourRetryAfter(retryAfter, 1_000);
    }
  }
}

const ids = (res: HttpResponse): string[] => (res.body.data as { id: string }[]).map((x) => x.id);

/** Every item of a paginated list (the caller's query, all pages). */
async function everyPage(api: HttpClient, path: string): Promise<Record<string, any>[]> {
  const out: Record<string, any>[] = [];
  const join = path.includes('?') ? '&' : '?';
  for (let page = 1; ; page += 1) {
    const res = await api.get(`${path}${join}limit=100&page=${page}`);
    expect(res.status, `${path}: ${res.text}`).to.equal(200);
    out.push(...(res.body.data as Record<string, any>[]));
    if (page >= res.body.pagination.pages) return out;
  }
}

/** Every principal id, deleted ones included. */
async function allPrincipalIds(api: HttpClient): Promise<Set<string>> {
  const living = await everyPage(api, '/v1/principals');
  const deleted = await everyPage(api, '/v1/principals?status=deleted');
  return new Set([...living, ...deleted].map((p) => p['id'] as string));
}

/** One request of the load, as the client saw it. */
interface Outcome {
  label: string;
  ok: boolean;
  startedAt: number;
  /** The instance that answered (the proxy says which), or null when none did. */
  upstream: string | null;
}

/** A write the service acknowledged, and how to tell that it is there. */
interface Acknowledged {
  label: string;
  token: string | null;
  /** The instance that acknowledged it. */
  upstream: string | null;
  /** Reads it back through `api` with its token; says what is wrong, or null. */
  check(api: HttpClient): Promise<string | null>;
}

/**
 * A client of the whole deployment: workers that each, in a loop, create a principal, change it,
 * put it in a new group, give the group a policy, search, decide, and now and then delete the
 * policy again. Each request after a write carries that write's consistency token (when the
 * service gave one). A step whose answer is not the expected one ends its worker's round.
 */
class MixedLoad {
  readonly outcomes: Outcome[] = [];
  readonly acknowledged: Acknowledged[] = [];
  /** Rounds finished, per worker. */
  readonly rounds: number[] = [];
  private stopped = false;

  constructor(
    private readonly api: HttpClient,
    private readonly tag: string,
  ) {}

  stop(): void {
    this.stopped = true;
  }

  /** Runs `workers` workers until `stop()`, or until each has done `maxRounds` rounds. */
  async run(workers: number, maxRounds = Number.POSITIVE_INFINITY): Promise<void> {
    await Promise.all(
      Array.from({ length: workers }, async (_, w) => {
        this.rounds[w] = 0;
        for (let k = 0; !this.stopped && k < maxRounds; k += 1) {
          await this.round(w, k);
          this.rounds[w] = k + 1;
        }
      }),
    );
  }

  /** The requests sent at or after `since` (epoch ms) that did not get the answer expected. */
  failuresSince(since: number): string[] {
    return this.outcomes.filter((o) => o.startedAt >= since && !o.ok).map((o) => o.label);
  }

  /** Sends a request; the answer when it has the `expected` status, else undefined. */
  private async send(
    expected: number,
    method: string,
    path: string,
    body: unknown,
    token: string | null,
  ): Promise<HttpResponse | undefined> {
    const startedAt = Date.now();
    const label = `${method} ${path}`;
    try {
      const res = await this.api.request(method, path, {
        ...consistent(token),
        ...(body === undefined ? {} : { body }),
      });
      const ok = res.status === expected;
      this.outcomes.push({
        label: ok ? label : `${label}: ${res.status} ${res.text.slice(0, 300)}`,
        ok,
        startedAt,
        upstream: res.headers.get('x-upstream-port'),
      });
      return ok ? res : undefined;
    } catch (err) {
      this.outcomes.push({
        label: `${label}: no answer (${(err as Error).message})`,
        ok: false,
        startedAt,
        upstream: null,
      });
      return undefined;
    }
  }

  /** Notes an acknowledged write: `path` read back with its token answers 200 and a body that `ok` accepts. */
  private acknowledge(label: string, res: HttpResponse, path: string, ok: (body: any) => boolean): void {
    const token = tokenOf(res);
    this.acknowledged.push({
      label,
      token,
      upstream: res.headers.get('x-upstream-port'),
      check: async (api) => {
        const back = await api.get(path, consistent(token));
        return back.status === 200 && ok(back.body) ? null : `GET ${path}: ${back.status} ${back.text}`;
      },
    });
  }

  private async round(w: number, k: number): Promise<void> {
    const name = `${this.tag}-w${w}-${k}`;
    const type = k % 2 === 0 ? 'SERVICE_ACCOUNT' : 'AI_AGENT';
    const principal = await this.send(
      201,
      'POST',
      '/v1/principals',
      { type, name, attributes: { team: this.tag } },
      null,
    );
    if (!principal) return;
    const p = principal.body.id as string;
    this.acknowledge(`${p} created`, principal, `/v1/principals/${p}`, (b) => b.name === name);

    const patched = await this.send(
      200,
      'PATCH',
      `/v1/principals/${p}`,
      { attributes: { stage: 'patched' } },
      tokenOf(principal),
    );
    if (!patched) return;
    this.acknowledge(
      `${p} patched`,
      patched,
      `/v1/principals/${p}`,
      (b) => b.attributes?.stage === 'patched',
    );

    const group = await this.send(201, 'POST', '/v1/groups', { name: `${name}-group` }, tokenOf(patched));
    if (!group) return;
    const g = group.body.id as string;
    this.acknowledge(`${g} created`, group, `/v1/groups/${g}`, (b) => b.name === `${name}-group`);

    const member = await this.send(200, 'PUT', `/v1/groups/${g}/members/${p}`, undefined, tokenOf(group));
    if (!member) return;
    this.acknowledge(`${p} added to ${g}`, member, `/v1/groups/${g}/members`, (b) =>
      (b.data as { id: string }[]).some((m) => m.id === p),
    );

    const resource = { type: 'database', identifier: `${name}-db` };
    const policy = await this.send(
      201,
      'POST',
      '/v1/policies',
      {
        name: `${name}-policy`,
        effect: 'allow',
        subjects: { groups: [g] },
        actions: ['read'],
        resources: [resource],
      },
      tokenOf(member),
    );
    if (!policy) return;
    const pol = policy.body.id as string;
    this.acknowledge(`${pol} created`, policy, `/v1/policies/${pol}`, (b) => b.name === `${name}-policy`);

    const query = { query: { attributes: { team: this.tag } }, limit: 20 };
    if (!(await this.send(200, 'POST', '/v1/principals/search', query, tokenOf(policy)))) return;
    const decision = { principal_id: p, action: 'read', resource };
    if (!(await this.send(200, 'POST', '/v1/decisions/evaluate', decision, tokenOf(policy)))) return;
    if (k % 3 !== 2) return;

    const deleted = await this.send(200, 'DELETE', `/v1/policies/${pol}`, undefined, tokenOf(policy));
    if (!deleted) return;
    this.acknowledge(`${pol} deleted`, deleted, `/v1/policies/${pol}`, (b) => b.status === 'deleted');
  }
}

/** Problems found in a loop, gathered so that one failure shows them all, grouped by kind. */
class Findings {
  private readonly byKind = new Map<string, string[]>();

  /** Notes `detail` under `kind`; the ids in `kind` are left out, so that alike problems group. */
  add(kind: string, detail: string): void {
    const key = kind.replace(/\b[a-z]{3}_[0-9A-Z]{26}\b/g, '{id}');
    this.byKind.set(key, [...(this.byKind.get(key) ?? []), detail]);
  }

  get count(): number {
    return [...this.byKind.values()].reduce((n, list) => n + list.length, 0);
  }

  summary(): string {
    return [...this.byKind.entries()]
      .map(([kind, list]) => `${kind}: ${list.length} times, e.g.\n    ${list.slice(0, 4).join('\n    ')}`)
      .join('\n  ');
  }
}

describe('three instances behind a round-robin proxy', function () {
  this.timeout(180_000);

  describe('on one store and one Redis', () => {
    let redis: Redis;
    let instances: ServiceProcess[] = [];
    /** The admin's client per instance, straight to it. */
    let direct: HttpClient[] = [];
    let proxy: RoundRobinProxy;
    /** The admin's client through the proxy. */
    let viaProxy: HttpClient;
    const receiver = new Receiver();

    before(async () => {
      redis = await connectTestRedis();
      proxy = new RoundRobinProxy();
      await proxy.start();
      // One deployment: every instance knows itself by the proxy's address, so that a token one
      // issues is good on the others.
      instances = await startThree(sharedEnv({ PUBLIC_BASE_URL: proxy.url }));
      proxy.route(instances.map((s) => s.port));
      const token = (await tokenFor(instances[0]!.http, ADMIN)).access_token;
      direct = instances.map((s) => new ConsistentClient(s.http.baseUrl, { token }));
      viaProxy = new ConsistentClient(proxy.url, { token });
      await receiver.start();
    });

    after(async () => {
      await proxy?.stop();
      await killServiceProcesses();
      await receiver.stop();
      if (redis) {
        await deleteKeys(redis, `test:rl:multi:${RUN}:*`);
        await redis.quit();
      }
      await resetDatabaseAt(neo4jTarget());
    });

    it('1. reads its own writes on any other instance, given the Consistency-Token of the write', async () => {
      const findings = new Findings();
      const tag = `ryw-${RUN}`;
      const at = (api: HttpClient): string => api.baseUrl.replace('http://127.0.0.1', '');
      const decide = (
        api: HttpClient,
        principal: string,
        action: string,
        identifier: string,
        token: string | null,
      ) =>
        api.post(
          '/v1/decisions/evaluate',
          { principal_id: principal, action, resource: { type: 'database', identifier } },
          consistent(token),
        );

      // A group whose members may write one database, known to every instance's decisions before
      // the loop: the membership changes below are then all that a decision on it depends on.
      const a = direct[0]!;
      const members = await a.post('/v1/groups', { name: `${tag}-members` });
      expect(members.status, members.text).to.equal(201);
      const g0 = members.body.id as string;
      const seed = await a.post('/v1/principals', { type: 'SERVICE_ACCOUNT', name: `${tag}-seed` });
      expect(seed.status, seed.text).to.equal(201);
      expect((await a.put(`/v1/groups/${g0}/members/${seed.body.id}`)).status).to.equal(200);
      const membersDb = `${tag}-members-db`;
      const groupPolicy = await a.post('/v1/policies', {
        name: `${tag}-members-write`,
        effect: 'allow',
        subjects: { groups: [g0] },
        actions: ['write'],
        resources: [{ type: 'database', identifier: membersDb }],
      });
      expect(groupPolicy.status, groupPolicy.text).to.equal(201);
      for (const api of direct) {
        await eventually(
          async () => (await decide(api, seed.body.id as string, 'write', membersDb, null)).body.decision,
          (d) => d === 'ALLOW',
          10_000,
        );
      }

      /** A decision on `r`: null when it is `expected`, else what it was. */
      const decided = async (
        r: HttpClient,
        token: string | null,
        principal: string,
        action: string,
        identifier: string,
        expected: 'ALLOW' | 'DENY',
        policy?: string,
      ): Promise<string | null> => {
        const res = await decide(r, principal, action, identifier, token);
        if (res.status !== 200) return `${res.status} ${res.text}`;
        const body = res.body as { decision: string; granted_by: string[] };
        if (body.decision !== expected) return body.decision;
        return policy && !body.granted_by.includes(policy) ? `granted by ${body.granted_by.join()}` : null;
      };
      const got = async (r: HttpClient, path: string, token: string | null, ok: (body: any) => boolean) => {
        const res = await r.get(path, consistent(token));
        return res.status === 200 && ok(res.body) ? null : `${res.status} ${res.text.slice(0, 200)}`;
      };
      const found = async (
        r: HttpClient,
        query: unknown,
        token: string | null,
        id: string,
        present = true,
      ) => {
        const res = await r.post('/v1/principals/search', { query }, consistent(token));
        if (res.status !== 200) return `${res.status} ${res.text}`;
        return ids(res).includes(id) === present ? null : `search answered ${JSON.stringify(ids(res))}`;
      };

      // Each instance writes in turn, nine times, while the other two read; each kind of write
      // below is made at least nine times, three times by each instance.
      for (let i = 0; i < 27; i += 1) {
        const writer = direct[i % 3]!;
        const readers = [direct[(i + 1) % 3]!, direct[(i + 2) % 3]!];
        const on = `#${i} written on ${at(writer)}`;
        /**
         * A write on the writer, then, on both other instances at once and with the write's token,
         * the reads that must see it: each says what it found wrong, or null.
         */
        const step = async (
          label: string,
          write: () => Promise<HttpResponse>,
          status: number,
          reads: Record<
            string,
            (r: HttpClient, token: string | null, res: HttpResponse) => Promise<string | null>
          >,
        ): Promise<HttpResponse> => {
          const res = await write();
          expect(res.status, `${on}: ${label}: ${res.text}`).to.equal(status);
          const token = tokenOf(res);
          if (!token) {
            findings.add(
              `a ${res.status} write answered without a ${TOKEN_HEADER} header`,
              `${on}: ${label}`,
            );
          }
          await Promise.all(
            readers.flatMap((r) =>
              Object.entries(reads).map(async ([what, read]) => {
                const wrong = await read(r, token, res);
                if (wrong !== null) {
                  findings.add(`after ${label}, ${what}`, `${on}, read on ${at(r)}: ${wrong}`);
                }
              }),
            ),
          );
          return res;
        };
        const name = `${tag}-${i}`;
        const principal = await step(
          'POST /v1/principals',
          () => writer.post('/v1/principals', { type: 'SERVICE_ACCOUNT', name, attributes: { team: tag } }),
          201,
          {
            'GET finds it': (r, t, res) => got(r, `/v1/principals/${res.body.id}`, t, (b) => b.name === name),
            'search finds it': (r, t, res) => found(r, { name }, t, res.body.id as string),
          },
        );
        const p = principal.body.id as string;

        const db = `${tag}-db-${i}`;
        const policyBody = {
          name: `${tag}-read-${i}`,
          effect: 'allow',
          subjects: { principals: [p] },
          actions: ['read'],
          resources: [{ type: 'database', identifier: db }],
        };
        const policy = await step('POST /v1/policies', () => writer.post('/v1/policies', policyBody), 201, {
          'a decision applies it': (r, t, res) =>
            decided(r, t, p, 'read', db, 'ALLOW', res.body.id as string),
        });
        const pol = policy.body.id as string;

        const stage = `patched-${i}`;
        await step(
          `PATCH /v1/principals/${p}`,
          () => writer.patch(`/v1/principals/${p}`, { attributes: { stage } }),
          200,
          {
            'GET sees the change': (r, t) =>
              got(r, `/v1/principals/${p}`, t, (b) => b.attributes?.stage === stage),
            'search finds it by the new value': (r, t) => found(r, { name, attributes: { stage } }, t, p),
          },
        );

        await step(
          `PUT /v1/groups/${g0}/members/${p}`,
          () => writer.put(`/v1/groups/${g0}/members/${p}`),
          200,
          {
            'the access view shows it': (r, t) =>
              got(r, `/v1/principals/${p}/access`, t, (b) =>
                (b.access as { resource: { identifier: string }; actions: string[] }[]).some(
                  (e) => e.resource.identifier === membersDb && e.actions.includes('write'),
                ),
              ),
            'a decision applies it': (r, t) => decided(r, t, p, 'write', membersDb, 'ALLOW'),
          },
        );
        await step(
          `DELETE /v1/groups/${g0}/members/${p}`,
          () => writer.delete(`/v1/groups/${g0}/members/${p}`),
          200,
          { 'a decision no longer applies it': (r, t) => decided(r, t, p, 'write', membersDb, 'DENY') },
        );

        // The other kinds of write: one set per round of the three writers, in turn.
        const extras = Math.floor(i / 3) % 3;
        if (extras === 0) {
          await step(
            `PUT /v1/policies/${pol}`,
            () => writer.put(`/v1/policies/${pol}`, { ...policyBody, actions: ['read', 'list'] }),
            200,
            { 'a decision applies the new version': (r, t) => decided(r, t, p, 'list', db, 'ALLOW', pol) },
          );
        } else if (extras === 1) {
          const group = await step(
            'POST /v1/groups',
            () => writer.post('/v1/groups', { name: `${tag}-group-${i}` }),
            201,
            { 'GET finds it': (r, t, res) => got(r, `/v1/groups/${res.body.id}`, t, () => true) },
          );
          const g = group.body.id as string;
          await step(
            `PATCH /v1/groups/${g}`,
            () => writer.patch(`/v1/groups/${g}`, { name: `${tag}-renamed-${i}` }),
            200,
            {
              'GET sees the change': (r, t) =>
                got(r, `/v1/groups/${g}`, t, (b) => b.name === `${tag}-renamed-${i}`),
            },
          );
          await step(`DELETE /v1/groups/${g}`, () => writer.delete(`/v1/groups/${g}`), 200, {
            'GET finds it gone': async (r, t) => {
              const res = await r.get(`/v1/groups/${g}`, consistent(t));
              return res.status === 404 ? null : `${res.status} ${res.text.slice(0, 200)}`;
            },
          });
        } else {
          await step(`DELETE /v1/policies/${pol}`, () => writer.delete(`/v1/policies/${pol}`), 200, {
            'a decision no longer applies it': (r, t) => decided(r, t, p, 'read', db, 'DENY'),
          });
          await step(`DELETE /v1/principals/${p}`, () => writer.delete(`/v1/principals/${p}`), 200, {
            'GET sees it deleted': (r, t) => got(r, `/v1/principals/${p}`, t, (b) => b.status === 'deleted'),
            'search leaves it out': (r, t) => found(r, { name }, t, p, false),
          });
        }
      }
      expect(findings.count, `\n  ${findings.summary()}`).to.equal(0);
    });

    it('1. refuses a malformed or altered Consistency-Token with 400 VALIDATION_FAILED', async () => {
      const created = await direct[0]!.post('/v1/principals', { type: 'AI_AGENT', name: `bad-token-${RUN}` });
      expect(created.status, created.text).to.equal(201);
      const p = created.body.id as string;
      const garbage = { headers: { [TOKEN_HEADER]: 'garbage' } };
      const answers: [string, HttpResponse][] = [
        [`GET /v1/principals/${p} with garbage`, await direct[1]!.get(`/v1/principals/${p}`, garbage)],
        [
          'POST /v1/principals/search',
          await direct[2]!.post('/v1/principals/search', { query: { name: `bad-token-${RUN}` } }, garbage),
        ],
        [
          'POST /v1/decisions/evaluate',
          await direct[1]!.post(
            '/v1/decisions/evaluate',
            { principal_id: p, action: 'read', resource: { type: 'database', identifier: 'x' } },
            garbage,
          ),
        ],
        [`GET /v1/principals/${p}/access`, await direct[2]!.get(`/v1/principals/${p}/access`, garbage)],
      ];
      const refused = (what: string, res: HttpResponse): void => {
        expect(res.status, `${what}: ${res.text}`).to.equal(400);
        expect(res.headers.get('content-type')).to.match(/^application\/problem\+json/);
        expect(res.body, what).to.include({ status: 400, code: 'VALIDATION_FAILED' });
      };
      for (const [what, res] of answers) refused(what, res);

      // A token of this deployment with one character changed is no token of it either.
      const token = tokenOf(created);
      expect(token, `POST /v1/principals answered a ${TOKEN_HEADER}`).to.be.a('string');
      let at = Math.floor(token!.length / 2);
      if (token![at] === '.') at += 1;
      const altered = `${token!.slice(0, at)}${token![at] === 'A' ? 'B' : 'A'}${token!.slice(at + 1)}`;
      refused(
        `GET /v1/principals/${p} with an altered token`,
        await direct[1]!.get(`/v1/principals/${p}`, consistent(altered)),
      );
    });

    it('2. delivers every subscribed event of the audit trail exactly once, whichever instance sends it', async () => {
      receiver.received.length = 0;
      receiver.reply = () => ({ status: 204 });
      const created = await direct[0]!.post('/v1/webhooks', {
        url: receiver.url,
        events: ['principal.*', 'group.*', 'policy.*'],
        description: 'multi-instance receiver',
      });
      expect(created.status, created.text).to.equal(201);
      const hook = created.body as { id: string; secret: string; created_at: string };
      try {
        const load = new MixedLoad(viaProxy, `hooks-${RUN}`);
        await load.run(3, 4);
        expect(load.failuresSince(0)).to.deep.equal([]);

        // The trail of the subscribed kinds since the webhook exists, what reached the receiver and
        // what the delivery log records as sent.
        const snapshot = async () => {
          const trail = await everyPage(
            direct[1]!,
            `/v1/audit/events?type=principal.*,group.*,policy.*&since=${encodeURIComponent(hook.created_at)}`,
          );
          const logged = await everyPage(direct[2]!, `/v1/webhooks/${hook.id}/deliveries?success=true`);
          return {
            trail: trail.map((e) => e['id'] as string).sort(),
            sent: receiver.received.map((r) => String(r.headers['webhook-id'])),
            logged: logged.map((d) => d['event_id'] as string),
          };
        };
        const unique = (list: string[]): string[] => [...new Set(list)].sort();
        const settled = (s: Awaited<ReturnType<typeof snapshot>>): boolean =>
          s.trail.length > 0 &&
          JSON.stringify(unique(s.sent)) === JSON.stringify(s.trail) &&
          JSON.stringify(unique(s.logged)) === JSON.stringify(s.trail);
        const { value: first } = await eventually(snapshot, settled, 30_000, 200);
        expect(first.trail.length, 'events of the load').to.be.at.least(4 * 3 * 5);
        // Every instance's dispatcher looks at the outbox twice more: it would send anything
        // twice, or anything more, then; it does not.
        await instanceRuns(direct, 'webhooks.dispatch', 2);
        const last = await eventually(snapshot, settled, 10_000, 200).then(
          ({ value }) => value,
          () => snapshot(),
        );
        const twice = (list: string[]) => list.filter((id, i) => list.indexOf(id) !== i);
        expect(twice(last.sent), 'events delivered more than once').to.deep.equal([]);
        expect(twice(last.logged), 'events logged as delivered more than once').to.deep.equal([]);
        expect(unique(last.sent), 'delivered: the trail, nothing more, nothing less').to.deep.equal(
          last.trail,
        );
        expect(unique(last.logged), 'logged as delivered: the trail').to.deep.equal(last.trail);
        for (const r of receiver.received) {
          const payload = verifyDelivery(hook.secret, r);
          expect(payload.data.id).to.equal(r.headers['webhook-id']);
          expect(payload.type).to.match(/^(principal|group|policy)\./);
        }
      } finally {
        const removed = await direct[0]!.delete(`/v1/webhooks/${hook.id}`);
        expect(removed.status, removed.text).to.equal(200);
      }
    });

    it('3. runs each report once, whichever instance it was requested through', async () => {
      const requests = [
        { type: 'principal_inventory', format: 'json' },
        { type: 'principal_inventory', format: 'csv' },
        { type: 'audit_log', format: 'json' },
        { type: 'orphaned_principals', format: 'csv' },
        { type: 'dormant_principals', format: 'json', parameters: { days: 30 } },
        { type: 'access_review', format: 'csv' },
      ];
      const before = await allPrincipalIds(direct[0]!);
      const load = new MixedLoad(viaProxy, `reports-${RUN}`);
      const loading = load.run(2);
      const reports: string[] = [];
      try {
        for (const [i, body] of requests.entries()) {
          const res = await direct[i % 3]!.post('/v1/audit/reports', body);
          expect(res.status, res.text).to.equal(202);
          reports.push(res.body.id as string);
        }
        await eventually(
          async () =>
            Promise.all(
              reports.map(
                async (id, i) => (await direct[(i + 1) % 3]!.get(`/v1/audit/reports/${id}`)).body.status,
              ),
            ),
          (statuses) => statuses.every((s) => s === 'completed' || s === 'failed'),
          60_000,
          200,
        );
      } finally {
        load.stop();
        await loading;
      }
      expect(load.failuresSince(0)).to.deep.equal([]);
      const after = await allPrincipalIds(direct[0]!);

      for (const [i, id] of reports.entries()) {
        const { type, format } = requests[i]!;
        // Every instance sees the same finished report.
        const seen = await Promise.all(
          direct.map(async (api) => (await api.get(`/v1/audit/reports/${id}`)).body),
        );
        const report = seen[0]!;
        expect(report.status, JSON.stringify(report)).to.equal('completed');
        expect(report.progress).to.equal(100);
        for (const other of seen) expect(other, `${id} on every instance`).to.deep.equal(report);

        // Written once: as many rows as it counts, none twice.
        const content = await direct[(i + 2) % 3]!.get(`/v1/audit/reports/${id}/content`);
        expect(content.status, content.text).to.equal(200);
        const rows: Record<string, unknown>[] =
          format === 'csv'
            ? parse<Record<string, string>>(content.text, { columns: true })
            : (content.body as { data: Record<string, unknown>[] }).data;
        expect(rows, `${type} ${format} rows`).to.have.length(report.row_count as number);
        const keys = rows.map((r) =>
          type === 'access_review'
            ? `${String(r['principal_id'])} ${String(r['resource_type'])} ${String(r['resource_identifier'])} ${String(r['pattern'])}`
            : String(r['id']),
        );
        expect(
          keys.filter((k, n) => keys.indexOf(k) !== n),
          `${type} ${format}: rows written twice`,
        ).to.deep.equal([]);
        if (type === 'principal_inventory') {
          const listed = new Set(keys);
          expect(
            [...before].filter((p) => !listed.has(p)),
            'principals there before, missing',
          ).to.deep.equal([]);
          expect(
            [...listed].filter((p) => !after.has(p)),
            'rows naming no principal',
          ).to.deep.equal([]);
        }

        // Completed once, never failed.
        const announced = await direct[i % 3]!.get(
          `/v1/audit/events?type=report.completed,report.failed&target_id=${id}`,
        );
        expect(announced.status).to.equal(200);
        expect(
          (announced.body.data as { type: string }[]).map((e) => e.type),
          `the events of ${id}`,
        ).to.deep.equal(['report.completed']);
      }
      const listed = (await everyPage(direct[1]!, '/v1/audit/reports')).map((r) => r['id'] as string);
      for (const id of reports) {
        expect(
          listed.filter((x) => x === id),
          `${id} listed`,
        ).to.have.length(1);
      }
    });

    it('5. survives one instance killed mid-load: no acknowledged write lost, every later request answered', async () => {
      const load = new MixedLoad(viaProxy, `crash-${RUN}`);
      const loading = load.run(4);
      const victim = instances[2]!;
      const victimPort = String(victim.port);
      const survivors = direct.slice(0, 2);
      /** When the killed process was gone: requests sent later cannot have reached it. */
      let killedAt = Number.POSITIVE_INFINITY;
      try {
        await eventually(
          async () => load.acknowledged.length,
          (n) => n >= 40,
          60_000,
          10,
        );
        await victim.crash();
        killedAt = Date.now();
        expect(await victim.exited).to.equal('SIGKILL');
        // Every worker does at least two whole rounds begun after the kill.
        const roundsAtKill = [...load.rounds];
        await eventually(
          async () => load.rounds,
          (rounds) => rounds.every((n, w) => n >= roundsAtKill[w]! + 3),
          60_000,
          50,
        );
      } finally {
        load.stop();
        await loading;
      }
      const afterKill = load.outcomes.filter((o) => o.startedAt >= killedAt);
      expect(afterKill.length, 'requests sent after the kill').to.be.greaterThan(40);
      expect(load.failuresSince(killedAt), 'requests after the kill').to.deep.equal([]);
      expect(
        afterKill.filter((o) => o.upstream === victimPort),
        'answered by the killed instance',
      ).to.deep.equal([]);
      expect(
        proxy.retries.filter((r) => String(r.from) === victimPort).length,
        'requests the proxy moved off the killed instance',
      ).to.be.greaterThan(0);
      expect(proxy.unansweredErrors, 'requests no instance answered').to.deep.equal([]);
      expect(proxy.unanswered).to.equal(0);

      // Every acknowledged write is there, those of the killed instance included, read through a
      // survivor with its token.
      expect(
        load.acknowledged.filter((w) => w.upstream === victimPort).length,
        'writes the killed instance acknowledged',
      ).to.be.greaterThan(0);
      const lost: string[] = [];
      for (const [n, write] of load.acknowledged.entries()) {
        const problem = await write.check(survivors[n % 2]!);
        if (problem) lost.push(`${write.label} (acknowledged by :${write.upstream}): ${problem}`);
      }
      expect(lost, 'acknowledged writes not found').to.deep.equal([]);
    });
  });

  describe('rate limits shared through Redis', () => {
    const LIMIT = 12;
    const prefix = `test:rl:multi-limited:${RUN}`;
    let redis: Redis;
    let instances: ServiceProcess[] = [];
    let proxy: RoundRobinProxy;

    before(async () => {
      redis = await connectTestRedis();
      proxy = new RoundRobinProxy();
      await proxy.start();
      instances = await startThree(
        sharedEnv({
          PUBLIC_BASE_URL: proxy.url,
          RATE_LIMIT_STANDARD: String(LIMIT),
          RATE_LIMIT_KEY_PREFIX: prefix,
          EVENTS_CHANNEL: `test:events:multi-limited:${RUN}`,
          // Only so that each instance's warm-up below can come from an address of its own: the
          // proxy adds no X-Forwarded-For, and the client is counted by its id anyway.
          TRUST_PROXY: 'true',
        }),
      );
      proxy.route(instances.map((s) => s.port));
    });

    after(async () => {
      await proxy?.stop();
      await killServiceProcesses();
      if (redis) {
        await deleteKeys(redis, `${prefix}:*`);
        await redis.quit();
      }
    });

    it('4. allows one client the standard limit across all three instances together, then 429 with Retry-After', async () => {
      // Each instance counts in Redis (and not in memory, as while its connection is not ready
      // yet): a request to it from an address of its own shows up there.
      for (const [i, s] of instances.entries()) {
        const ip = `192.0.2.${i + 1}`;
        await eventually(
          async () => {
            await s.http.get('/v1/openapi.json', { headers: { 'X-Forwarded-For': ip } });
            return redis.exists(`${prefix}:standard:ip:${ip}`);
          },
          (n) => n === 1,
          10_000,
          100,
        );
      }
      const token = (await tokenFor(instances[0]!.http, ADMIN)).access_token;
      const client = new HttpClient(proxy.url).withToken(token);

      const answers: HttpResponse[] = [];
      for (let i = 0; i < 3 * LIMIT; i += 1) answers.push(await client.get('/v1/principals?limit=1'));
      const upstreams = answers.map((r) => r.headers.get('x-upstream-port'));
      expect(new Set(upstreams).size, 'requests spread over the three instances').to.equal(3);

      expect(
        answers.map((r) => r.status),
        'allowed across the three together: the limit, once',
      ).to.deep.equal([...Array<number>(LIMIT).fill(200), ...Array<number>(2 * LIMIT).fill(429)]);
      const allowed = answers.slice(0, LIMIT);
      expect(new Set(allowed.map((r) => r.headers.get('x-upstream-port'))).size).to.equal(3);
      expect(
        allowed.map((r) => Number(r.headers.get('x-ratelimit-remaining'))),
        'one count',
      ).to.deep.equal(Array.from({ length: LIMIT }, (_, i) => LIMIT - 1 - i));
      const refused = answers.slice(LIMIT);
      expect(new Set(refused.map((r) => r.headers.get('x-upstream-port'))).size).to.equal(3);
      for (const res of refused) {
        expect(res.status, res.text).to.equal(429);
        expect(res.headers.get('content-type')).to.match(/^application\/problem\+json/);
        expect(res.body).to.include({ status: 429, code: 'RATE_LIMITED' });
        expect(res.headers.get('retry-after')).to.match(/^\d+$/);
        expect(Number(res.headers.get('retry-after'))).to.be.within(1, 60);
        expect(res.headers.get('x-ratelimit-remaining')).to.equal('0');
      }
    });
  });
});
