/**
 * Webhook delivery and audit report benchmark: the targets of the webhooks-and-reports feature,
 * measured on the service running in this process, on a fresh embedded Neo4j (or the empty
 * database at NEO4J_URI):
 *
 * 1. dispatcher throughput: webhooks registered through `POST /v1/webhooks` (`principal.*`) to a
 *    receiver on 127.0.0.1 that answers 204 at once (a process of its own, so that it takes no
 *    time from the service's event loop; it checks every signature with the Standard Webhooks
 *    library, and that each webhook gets its events in event order). A backlog of BENCH_EVENTS
 *    `principal.created` events is written through the service's event sink, which queues each
 *    event for every subscribed webhook in the event's transaction, as any change does. While
 *    the backlog is written the webhooks are leased to a stand-in instance, as when another
 *    instance is delivering to them; the lease is then let go and the drain is timed from that
 *    moment to the receiver's last new delivery. Two shapes: one webhook (its deliveries go one
 *    after another, in event order) and BENCH_WEBHOOKS webhooks subscribed to the same events
 *    (delivered side by side). Deliveries/s = distinct (webhook, event) pairs acknowledged ÷ that
 *    time; the run fails if any pair is missing, and the delivery log must hold a success for
 *    each;
 * 2. reports: an organisation of BENCH_PRINCIPALS principals (bench/org.ts: people in a manager
 *    tree, service accounts, API keys and AI agents, nested groups) with registered resources and
 *    policies (bench/policy-set.ts, the shape bench:decisions uses) bulk-loaded, plus
 *    BENCH_AUDIT_EVENTS audit events over the past year; then each report type in each format
 *    requested through `POST /v1/audit/reports`, followed until completed, and its file
 *    downloaded: seconds from the request to completion (the service's `requested_at` and
 *    `completed_at`), rows, bytes, and the heap growth of this process while it was generated,
 *    over its `heapUsed` after a forced collection just before the request: the highest
 *    `heapUsed` sampled every 100 ms (garbage not yet collected included), and the highest seen
 *    right after a full collection (what the generation holds).
 *
 *   npm run bench:delivery                      # embedded Neo4j in a throwaway directory
 *   NEO4J_URI=bolt://... npm run bench:delivery # an existing (empty) Neo4j
 *
 * Knobs: BENCH_EVENTS (10000 per backlog), BENCH_WEBHOOKS (8, the fan-out shape), BENCH_ROUNDS
 * (3 drains per shape), BENCH_EVENT_BATCH (500 events per backlog transaction), BENCH_POLL_MS
 * (20: WEBHOOK_POLL_INTERVAL_MS), BENCH_DRAIN_TIMEOUT_S (600), BENCH_PRINCIPALS (100000),
 * BENCH_GROUPS (a twentieth of the principals), BENCH_RESOURCES (a fifth), BENCH_POLICIES (a
 * tenth), BENCH_AUDIT_EVENTS (100000), BENCH_REPORT_TYPES (all five), BENCH_REPORT_FORMATS
 * (csv,json), BENCH_REPORT_ROUNDS (1), BENCH_REPORT_TIMEOUT_S (900), BENCH_BATCH (1000 rows per
 * load transaction), BENCH_LOADERS (2), BENCH_PARTS (delivery,reports), BENCH_CPU_PROFILE (a
 * directory: CPU profiles of the first drain of each shape and the first run of each report go
 * there; the profiler's own memory then shows in the heap figures). Node needs --expose-gc for
 * the heap figures (the npm script passes it). Results also go to bench/results/delivery-*.json.
 */
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { constants, performance, PerformanceObserver } from 'node:perf_hooks';
import { Webhook } from 'standardwebhooks';
import { diffMaps, type OperationContext } from '../src/audit/audit.js';
import type { Config } from '../src/config/config.js';
import type { Runtime } from '../src/runtime.js';
import { REPORT_TYPES, type ReportType } from '../src/vocabulary/report-types.js';
import { BulkLoader, type SeedPrincipal } from '../src/seed/bulk.js';
import type { BenchClient } from './client.js';
import {
  ADMIN_ID,
  ask,
  benchConfig,
  benchMain,
  type BenchService,
  cypher,
  fmt,
  gc,
  loadPrincipals,
  log,
  median,
  env,
  ResultTable,
  profiled,
  withBenchService,
  writeResults,
} from './harness.js';
import { DEPARTMENTS, generateOrg, rng, seededId, TEAMS } from './org.js';
import { generatePolicies, generateResources, Membership } from './policy-set.js';

const EVENTS = env('BENCH_EVENTS', 10_000);
const WEBHOOKS = Math.max(2, env('BENCH_WEBHOOKS', 8));
const ROUNDS = Math.max(1, env('BENCH_ROUNDS', 3));
const EVENT_BATCH = env('BENCH_EVENT_BATCH', 500);
const POLL_MS = env('BENCH_POLL_MS', 20);
const DRAIN_TIMEOUT_S = env('BENCH_DRAIN_TIMEOUT_S', 600);
const PRINCIPALS = env('BENCH_PRINCIPALS', 100_000);
const GROUPS = env('BENCH_GROUPS', Math.round(PRINCIPALS / 20));
const RESOURCES = env('BENCH_RESOURCES', Math.round(PRINCIPALS / 5));
const POLICIES = env('BENCH_POLICIES', Math.round(PRINCIPALS / 10));
const AUDIT_EVENTS = env('BENCH_AUDIT_EVENTS', 100_000);
const FORMATS = (process.env['BENCH_REPORT_FORMATS'] || 'csv,json')
  .split(',')
  .map((f) => f.trim())
  .filter((f): f is 'csv' | 'json' => f === 'csv' || f === 'json');
const REPORT_ROUNDS = Math.max(1, env('BENCH_REPORT_ROUNDS', 1));
const REPORT_TIMEOUT_S = env('BENCH_REPORT_TIMEOUT_S', 900);
const BATCH = env('BENCH_BATCH', 1_000);
const LOADERS = env('BENCH_LOADERS', 2);
/** A directory: CPU profiles of the first drain of each shape and of each report are written there. */
const PARTS = new Set((process.env['BENCH_PARTS'] || 'delivery,reports').split(',').map((p) => p.trim()));

/**
 * The targets: deliveries/s to a local receiver; seconds and MB of heap per report of 100,000
 * principals (of 100,000 events for the audit log).
 */
const DELIVERY_TARGET = 500;
const REPORT_TARGET_S = 60;
const REPORT_TARGET_MB = 100;
const REPORT_TARGET_SIZE = 100_000;

const TYPES = (process.env['BENCH_REPORT_TYPES'] || REPORT_TYPES.join(','))
  .split(',')
  .map((t) => t.trim())
  .filter((t): t is ReportType => (REPORT_TYPES as readonly string[]).includes(t));

const MB = 1024 * 1024;
const HOLD_OWNER = 'bench:hold';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const table = new ResultTable();

/** Seconds and calls per unit of work the service spent in Neo4j so far (its own histogram). */
type DbTime = Record<string, { calls: number; seconds: number }>;

async function dbTime(runtime: Runtime): Promise<DbTime> {
  const out: DbTime = {};
  for (const v of (await runtime.metrics.dbDuration.get()).values) {
    const unit = String(v.labels['unit']);
    const entry = (out[unit] ??= { calls: 0, seconds: 0 });
    if (v.metricName?.endsWith('_sum')) entry.seconds = v.value;
    else if (v.metricName?.endsWith('_count')) entry.calls = v.value;
  }
  return out;
}

/** What was spent between two readings, on units whose name starts with `prefix`. */
function dbSpent(before: DbTime, after: DbTime, prefix: string): DbTime {
  const out: DbTime = {};
  for (const [unit, a] of Object.entries(after)) {
    if (!unit.startsWith(prefix)) continue;
    const b = before[unit] ?? { calls: 0, seconds: 0 };
    if (a.calls > b.calls) out[unit] = { calls: a.calls - b.calls, seconds: a.seconds - b.seconds };
  }
  return out;
}

const dbSummary = (spent: DbTime): string =>
  Object.entries(spent)
    .sort((a, b) => b[1].seconds - a[1].seconds)
    .map(
      ([unit, t]) => `${unit.split('/').pop()} ${t.calls}× ${((1000 * t.seconds) / t.calls).toFixed(1)} ms`,
    )
    .join(', ');

// ---- the receiver (a child process: `delivery.ts receiver`) ------------------------------------

interface ReceiverStats {
  /** Distinct (webhook, event) pairs received, each counted once. */
  distinct: number;
  /** Requests received, resent ones included. */
  requests: number;
  /** Pairs received again (at-least-once). */
  duplicates: number;
  /** Deliveries whose signature the Standard Webhooks library refused. */
  bad_signatures: number;
  /** New deliveries of a webhook that came before an event delivered to it earlier. */
  out_of_order: number;
  /** Requests to a path no webhook of this round uses. */
  unexpected: number;
  /** Epoch ms of the first and the last new delivery. */
  first_at: number | null;
  last_at: number | null;
  timed_out: boolean;
}

type ReceiverMessage =
  | { op: 'start' }
  | { op: 'expect'; hooks: { route: string; secret: string }[]; total: number }
  | { op: 'wait'; timeoutMs: number };

/**
 * Answers every POST with 204 as soon as its body has arrived, then checks it: the signature, that
 * the pair is new, and that it does not come before an event already delivered to the same
 * webhook (event order: time, then id, as the outbox orders them).
 */
function runReceiver(): void {
  let hooks = new Map<string, { verifier: Webhook; last: string }>();
  let seen = new Set<string>();
  let total = 0;
  let stats: ReceiverStats;
  let waiter: (() => void) | undefined;
  const reset = (): void => {
    stats = {
      distinct: 0,
      requests: 0,
      duplicates: 0,
      bad_signatures: 0,
      out_of_order: 0,
      unexpected: 0,
      first_at: null,
      last_at: null,
      timed_out: false,
    };
  };
  reset();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(204);
      res.end();
      const at = Date.now();
      stats.requests += 1;
      const hook = hooks.get(req.url ?? '');
      if (!hook) {
        stats.unexpected += 1;
        return;
      }
      const body = Buffer.concat(chunks).toString('utf8');
      let payload: { data: { id: string; occurred_at: string } };
      try {
        payload = hook.verifier.verify(body, {
          'webhook-id': String(req.headers['webhook-id']),
          'webhook-timestamp': String(req.headers['webhook-timestamp']),
          'webhook-signature': String(req.headers['webhook-signature']),
        }) as typeof payload;
      } catch {
        stats.bad_signatures += 1;
        return;
      }
      const key = `${req.url}\u0000${String(req.headers['webhook-id'])}`;
      if (seen.has(key)) {
        stats.duplicates += 1;
        return;
      }
      seen.add(key);
      const place = `${payload.data.occurred_at}\u0000${payload.data.id}`;
      if (place < hook.last) stats.out_of_order += 1;
      hook.last = place;
      stats.distinct += 1;
      stats.first_at ??= at;
      stats.last_at = at;
      if (stats.distinct >= total) waiter?.();
    });
  });
  server.keepAliveTimeout = 30_000;
  const answer = (work: () => Promise<unknown>): void => {
    work().then(
      (result) => process.send!({ ok: true, result }),
      (err: unknown) => process.send!({ ok: false, error: err instanceof Error ? err.message : String(err) }),
    );
  };
  process.on('message', (message: ReceiverMessage) => {
    switch (message.op) {
      case 'start':
        return answer(
          () =>
            new Promise((resolve, reject) => {
              server.once('error', reject);
              server.listen(0, '127.0.0.1', () => resolve({ port: (server.address() as AddressInfo).port }));
            }),
        );
      case 'expect':
        hooks = new Map(message.hooks.map((h) => [h.route, { verifier: new Webhook(h.secret), last: '' }]));
        seen = new Set();
        total = message.total;
        reset();
        return answer(async () => true);
      case 'wait':
        return answer(async () => {
          if (stats.distinct < total) {
            await new Promise<void>((resolve) => {
              const timer = setTimeout(() => {
                stats.timed_out = true;
                resolve();
              }, message.timeoutMs);
              waiter = () => {
                clearTimeout(timer);
                resolve();
              };
            });
            waiter = undefined;
          }
          return { ...stats };
        });
    }
  });
  process.on('disconnect', () => process.exit(0));
}

function startReceiverProcess(): ChildProcess {
  return fork(new URL(import.meta.url).pathname, ['receiver'], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

// ---- downloads ----------------------------------------------------------------------------------

/** Streams a file, counting its bytes and line ends, and answers how long that took. */
async function download(
  client: BenchClient,
  path: string,
): Promise<{ bytes: number; lines: number; seconds: number }> {
  const headers = await client.headers();
  const t0 = performance.now();
  const res = await fetch(`${client.base}${path}`, { headers });
  if (res.status !== 200 || !res.body) throw new Error(`GET ${path} answered ${res.status}`);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    for (let i = 0; i < chunk.length; i += 1) if (chunk[i] === 10) lines += 1;
  }
  return { bytes, lines, seconds: (performance.now() - t0) / 1000 };
}

/**
 * Waits until this process's event loop has been busy less than a fifth of the time over a
 * second (at most `maxMs`), so that work a previous step left running (the index following a
 * load, risk refreshes) does not fall into the next measurement. The dispatcher looking for due
 * deliveries every BENCH_POLL_MS keeps the loop from ever being quite idle. Answers the last
 * utilisation seen.
 */
async function settle(maxMs = 30_000): Promise<number> {
  const deadline = Date.now() + maxMs;
  let utilisation = 1;
  while (Date.now() < deadline) {
    const before = performance.eventLoopUtilization();
    await sleep(1_000);
    utilisation = performance.eventLoopUtilization(before).utilization;
    if (utilisation < 0.2) break;
  }
  return utilisation;
}

// ---- 1. delivery --------------------------------------------------------------------------------

interface DrainRound {
  webhooks: number;
  events: number;
  backlog_s: number;
  /** From letting go of the lease to the first and to the last new delivery received. */
  first_delivery_ms: number;
  drain_s: number;
  deliveries_per_s: number;
  /** Until every delivery was recorded and the outbox of these webhooks was empty. */
  recorded_s: number;
  logged_successes: number;
  /** The event loop's utilisation over the second before the lease was let go. */
  loop_busy_before: number;
  /** The dispatcher's statements during the drain: calls and seconds (session acquisition included). */
  db: DbTime;
  receiver: ReceiverStats;
}

/** A `principal.created` event as the principal service writes it, for a bulk-loaded principal. */
function creationEvent(p: SeedPrincipal) {
  return {
    type: 'principal.created' as const,
    target: { type: 'principal', id: p.id },
    changes: {
      type: { to: p.type },
      name: { to: p.name },
      status: { to: 'active' },
      ...diffMaps(null, p.attributes, 'attributes'),
      ...diffMaps(null, p.metadata, 'metadata'),
    },
  };
}

async function drainRound(
  runtime: Runtime,
  client: BenchClient,
  receiver: ChildProcess,
  receiverPort: number,
  webhookCount: number,
  principals: SeedPrincipal[],
  profileAs?: string,
): Promise<DrainRound> {
  const hooks: { id: string; route: string; secret: string }[] = [];
  for (let i = 0; i < webhookCount; i += 1) {
    const route = `/hooks/${i}`;
    const created = await client.json<{ id: string; secret: string }>(
      'POST',
      '/v1/webhooks',
      { url: `http://127.0.0.1:${receiverPort}${route}`, events: ['principal.*'], description: 'bench' },
      { expect: [201] },
    );
    hooks.push({ id: created.id, route, secret: created.secret });
  }
  const ids = hooks.map((h) => h.id);
  // Leased to a stand-in instance: the dispatcher sees them as taken until the lease is let go.
  await cypher(
    runtime.db,
    `MATCH (w:Webhook) WHERE w.id IN $ids
     SET w.dispatch_owner = $owner, w.dispatch_until = datetime() + duration('PT1H')`,
    { ids, owner: HOLD_OWNER },
  );

  const t0 = Date.now();
  await new BulkLoader(runtime.db).principals(principals);
  const op: OperationContext = {
    actor: { type: 'client', id: ADMIN_ID },
    meta: { requestId: null, sourceIp: '127.0.0.1', userAgent: 'bench/delivery' },
  };
  for (let from = 0; from < principals.length; from += EVENT_BATCH) {
    const slice = principals.slice(from, from + EVENT_BATCH);
    await runtime.db.write('bench/backlog', async (tx) => {
      for (const p of slice) runtime.events.record(tx, op, creationEvent(p));
    });
  }
  const backlogS = (Date.now() - t0) / 1000;
  const total = principals.length * webhookCount;
  const [queued] = await cypher(
    runtime.db,
    'MATCH (m:WebhookMessage) WHERE m.webhook_id IN $ids RETURN count(m) AS n',
    { ids },
  );
  if (queued?.['n'] !== total)
    throw new Error(`the outbox holds ${String(queued?.['n'])} entries, not ${total}`);
  // The index follows the new principals and their privileges are brought up to date before the
  // drain, not during it.
  await runtime.risk.privileges.refresh();
  const busy = await settle();

  await ask(receiver, { op: 'expect', hooks: hooks.map(({ route, secret }) => ({ route, secret })), total });
  const dbBefore = await dbTime(runtime);
  const released = Date.now();
  const stats = await profiled(profileAs, async () => {
    await cypher(
      runtime.db,
      `MATCH (w:Webhook) WHERE w.id IN $ids AND w.dispatch_owner = $owner
       SET w.dispatch_owner = null, w.dispatch_until = null`,
      { ids, owner: HOLD_OWNER },
    );
    return ask<ReceiverStats>(receiver, { op: 'wait', timeoutMs: DRAIN_TIMEOUT_S * 1000 });
  });
  let left = total;
  while (Date.now() - released < DRAIN_TIMEOUT_S * 1000) {
    const [row] = await cypher(
      runtime.db,
      'MATCH (m:WebhookMessage) WHERE m.webhook_id IN $ids RETURN count(m) AS n',
      { ids },
    );
    left = row?.['n'] as number;
    if (left === 0) break;
    await sleep(20);
  }
  const recordedS = (Date.now() - released) / 1000;
  const db = dbSpent(dbBefore, await dbTime(runtime), 'webhooks/');
  const [logged] = await cypher(
    runtime.db,
    'MATCH (d:WebhookDelivery) WHERE d.webhook_id IN $ids AND d.success RETURN count(d) AS n',
    { ids },
  );
  for (const id of ids) await client.json('DELETE', `/v1/webhooks/${id}`, undefined, { expect: [200] });

  const problems = [
    stats.distinct < total ? `${total - stats.distinct} of ${total} deliveries never arrived` : '',
    stats.bad_signatures > 0 ? `${stats.bad_signatures} bad signatures` : '',
    stats.unexpected > 0 ? `${stats.unexpected} requests to unknown paths` : '',
    left > 0 ? `${left} entries still queued` : '',
  ].filter(Boolean);
  if (problems.length > 0) throw new Error(`delivery round failed: ${problems.join('; ')}`);
  const drainS = (stats.last_at! - released) / 1000;
  return {
    webhooks: webhookCount,
    events: principals.length,
    backlog_s: backlogS,
    first_delivery_ms: stats.first_at! - released,
    drain_s: drainS,
    deliveries_per_s: stats.distinct / drainS,
    recorded_s: recordedS,
    logged_successes: logged?.['n'] as number,
    loop_busy_before: busy,
    db,
    receiver: stats,
  };
}

async function delivery(
  runtime: Runtime,
  client: BenchClient,
  now: number,
): Promise<Record<string, DrainRound[]>> {
  const receiver = startReceiverProcess();
  try {
    const { port } = await ask<{ port: number }>(receiver, { op: 'start' });
    const shapes = [1, WEBHOOKS];
    const population = generateOrg({
      principals: EVENTS * (ROUNDS * shapes.length + 1),
      groups: 0,
      seed: 7,
      now,
    }).principals;
    let used = 0;
    const take = (n: number): SeedPrincipal[] => population.slice(used, (used += n));
    // A short drain first, so that the measured ones start warm (JIT, plans, pooled connections).
    const warm = await drainRound(runtime, client, receiver, port, 2, take(Math.min(EVENTS, 1_000)));
    log(`warm-up drain: ${warm.receiver.distinct} deliveries in ${warm.drain_s.toFixed(2)} s`);
    const out: Record<string, DrainRound[]> = {};
    for (const webhooks of shapes) {
      const name = webhooks === 1 ? '1 webhook' : `${webhooks} webhooks`;
      const rounds: DrainRound[] = [];
      for (let round = 1; round <= ROUNDS; round += 1) {
        const r = await drainRound(
          runtime,
          client,
          receiver,
          port,
          webhooks,
          take(EVENTS),
          round === 1 ? `drain-${webhooks}` : undefined,
        );
        rounds.push(r);
        log(
          `drain ${name}, round ${round}/${ROUNDS}: ${r.receiver.distinct} deliveries in ${r.drain_s.toFixed(2)} s ` +
            `= ${Math.round(r.deliveries_per_s)}/s (first after ${r.first_delivery_ms} ms, all recorded after ` +
            `${r.recorded_s.toFixed(2)} s; backlog written in ${r.backlog_s.toFixed(1)} s; event loop ` +
            `${Math.round(r.loop_busy_before * 100)}% busy before; ` +
            `${r.receiver.duplicates} resent, ${r.receiver.out_of_order} out of order)\n  in Neo4j: ${dbSummary(r.db)}`,
        );
      }
      out[name] = rounds;
      const rates = rounds.map((r) => r.deliveries_per_s);
      const resent = rounds.reduce((n, r) => n + r.receiver.duplicates, 0);
      const disorder = rounds.reduce((n, r) => n + r.receiver.out_of_order, 0);
      table.add({
        scenario: `delivery, ${name} × ${EVENTS} events`,
        unit: 'dlv/s',
        median: median(rates),
        target: DELIVERY_TARGET,
        direction: 'min',
        on: 'median',
        rounds: rates,
        note: [
          `${EVENTS * webhooks} per round, every one received and logged`,
          resent > 0 ? `${resent} resent` : '',
          disorder > 0 ? `${disorder} out of event order` : '',
        ]
          .filter(Boolean)
          .join('; '),
      });
      table.add({
        scenario: `  ${name}: until every attempt is recorded`,
        unit: 's',
        median: median(rounds.map((r) => r.recorded_s)),
        rounds: rounds.map((r) => r.recorded_s),
        note: `first delivery after ${rounds.map((r) => r.first_delivery_ms).join('/')} ms`,
      });
    }
    return out;
  } finally {
    receiver.kill();
  }
}

/** What the delivery part left behind goes, so that the reports see only their organisation. */
async function clearDeliveryData(runtime: Runtime): Promise<void> {
  await cypher(
    runtime.db,
    `MATCH (n) WHERE n:Principal OR n:Attribute OR n:AuditEvent OR n:WebhookDelivery OR n:WebhookMessage
     CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS`,
  );
}

// ---- 2. reports ---------------------------------------------------------------------------------

const EVENT_TYPES = [
  'principal.updated',
  'principal.updated',
  'principal.updated',
  'principal.status_changed',
  'group.member_added',
  'group.member_added',
  'group.member_removed',
  'policy.updated',
  'auth.failed',
  'token.revoked',
] as const;

/**
 * Audit events of the past year, as cypher/events/append.cypher stores them. They are history
 * rather than changes to follow: numbered 0 in shard 0, before anything the change feed reads.
 */
async function writeAuditEvents(runtime: Runtime, ids: readonly string[], now: number): Promise<void> {
  const random = rng(99);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const span = 365 * 86_400_000;
  const chunk = 10_000;
  for (let from = 0; from < AUDIT_EVENTS; from += chunk) {
    const events = [];
    for (let i = from; i < Math.min(AUDIT_EVENTS, from + chunk); i += 1) {
      const at = now - span + Math.floor((i * span) / AUDIT_EVENTS);
      const type = pick(EVENT_TYPES);
      const target = pick(ids);
      const changes =
        type === 'principal.updated'
          ? { 'attributes.team': { from: pick(TEAMS), to: pick(TEAMS) } }
          : type === 'principal.status_changed'
            ? { status: { from: 'active', to: 'suspended' } }
            : type.startsWith('group.')
              ? { member: { to: target } }
              : type === 'policy.updated'
                ? {
                    version: { from: 1, to: 2 },
                    'subjects.match.attributes.department': { to: pick(DEPARTMENTS) },
                  }
                : null;
      events.push({
        id: seededId('evt', i, at),
        type,
        occurred_at: new Date(at).toISOString(),
        actor_type: 'client',
        actor_id: ADMIN_ID,
        target_type:
          type.split('.')[0] === 'group' ? 'group' : type === 'auth.failed' ? 'client' : 'principal',
        target_id: target,
        outcome: type === 'auth.failed' ? 'failure' : 'success',
        request_id: `req-${i.toString(36)}`,
        source_ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
        user_agent: 'okta-provisioning/1.0',
        reason: type === 'auth.failed' ? 'invalid client secret' : null,
        changes: changes ? JSON.stringify(changes) : null,
      });
    }
    await cypher(
      runtime.db,
      `UNWIND $events AS event
       CREATE (e:AuditEvent)
       SET e = event {.*, occurred_at: datetime(event.occurred_at), seq: 0, shard: 0}`,
      { events },
    );
  }
}

/** Loads the organisation; what was generated for it is let go when this returns. */
async function loadOrganisation(runtime: Runtime, now: number): Promise<Record<string, number>> {
  log(
    `generating ${PRINCIPALS} principals, ${GROUPS} groups, ${RESOURCES} resources and ${POLICIES} policies`,
  );
  const org = generateOrg({ principals: PRINCIPALS, groups: GROUPS, seed: 42, now });
  const resources = generateResources(org, RESOURCES, 43, now);
  const set = generatePolicies(org, resources, new Membership(org), {
    policies: POLICIES,
    resources: RESOURCES,
    seed: 44,
    now,
    blastPrincipals: Math.floor(PRINCIPALS / 10),
  });
  const loader = new BulkLoader(runtime.db);
  const t0 = Date.now();
  await loadPrincipals(loader, org.principals, { batch: BATCH, loaders: LOADERS });
  const at = new Date(now - 30 * 86_400_000).toISOString();
  for (let i = 0; i < org.groups.length; i += BATCH) await loader.groups(org.groups.slice(i, i + BATCH));
  for (let i = 0; i < org.nesting.length; i += BATCH * 5)
    await loader.nesting(org.nesting.slice(i, i + BATCH * 5), at);
  for (let i = 0; i < org.memberships.length; i += BATCH * 5)
    await loader.memberships(org.memberships.slice(i, i + BATCH * 5), at);
  for (let i = 0; i < set.resources.length; i += BATCH)
    await loader.resources(set.resources.slice(i, i + BATCH));
  // One transaction at a time: batches may name the same new resource.
  for (let i = 0; i < set.policies.length; i += BATCH)
    await loader.policies(set.policies.slice(i, i + BATCH));
  const loadS = (Date.now() - t0) / 1000;
  const t1 = Date.now();
  await writeAuditEvents(
    runtime,
    org.principals.map((p) => p.id),
    now,
  );
  const eventsS = (Date.now() - t1) / 1000;
  log(
    `loaded ${org.principals.length} principals, ${org.groups.length} groups, ${org.memberships.length} ` +
      `memberships, ${set.resources.length} resources and ${set.policies.length} policies in ${loadS.toFixed(1)} s; ` +
      `${AUDIT_EVENTS} audit events in ${eventsS.toFixed(1)} s`,
  );
  return {
    principals: org.principals.length,
    groups: org.groups.length,
    memberships: org.memberships.length + org.nesting.length,
    resources: set.resources.length,
    policies: set.policies.length,
    audit_events: AUDIT_EVENTS,
    load_s: loadS,
    audit_events_s: eventsS,
  };
}

interface ReportRun {
  type: ReportType;
  format: 'csv' | 'json';
  status: string;
  /** From the request to completion, by the service's own clock (`requested_at`, `completed_at`). */
  seconds: number;
  /** From the request until the job runner took it up. */
  queued_s: number;
  rows: number;
  bytes: number;
  /** Line ends in the file, a check on `rows` (CSV: one per row and the header). */
  lines: number;
  download_s: number;
  /** `heapUsed` after a forced collection just before the request: the service with its index. */
  heap_baseline_mb: number;
  /** Highest `heapUsed` during generation less the value after a forced collection before the request. */
  heap_growth_mb: number;
  /** Highest `heapUsed` seen right after a full collection during generation, less the baseline. */
  heap_live_mb: number;
  /** After the report, less the same baseline, once collected again. */
  heap_retained_mb: number;
  /** The generator's statements: calls and seconds (session acquisition included). */
  db: DbTime;
}

interface ReportView {
  id: string;
  status: string;
  requested_at: string;
  started_at: string | null;
  completed_at: string | null;
  row_count: number;
  error: string | null;
}

async function report(
  runtime: Runtime,
  client: BenchClient,
  type: ReportType,
  format: 'csv' | 'json',
  profileAs?: string,
): Promise<ReportRun> {
  const dbBefore = await dbTime(runtime);
  gc();
  const baseline = process.memoryUsage().heapUsed;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 100);
  // What survives the full collections during generation: the part of the growth that is held
  // rather than garbage not yet collected.
  let live = baseline;
  const collections = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const { detail } = entry as { detail?: { kind?: number } };
      if (detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        live = Math.max(live, process.memoryUsage().heapUsed);
      }
    }
  });
  collections.observe({ entryTypes: ['gc'] });
  let view: ReportView;
  try {
    view = await profiled(profileAs, async () => {
      let current = await client.json<ReportView>(
        'POST',
        '/v1/audit/reports',
        { type, format },
        { expect: [202] },
      );
      const deadline = Date.now() + REPORT_TIMEOUT_S * 1000;
      while (current.status === 'pending' || current.status === 'running') {
        if (Date.now() > deadline) throw new Error(`${type} (${format}) is still ${current.status}`);
        await sleep(100);
        current = await client.json<ReportView>('GET', `/v1/audit/reports/${current.id}`, undefined, {
          expect: [200],
        });
      }
      return current;
    });
  } finally {
    clearInterval(sampler);
    collections.disconnect();
  }
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  if (view.status !== 'completed') throw new Error(`${type} (${format}) ${view.status}: ${view.error}`);
  // The generator's statements, not the poller's reads of the report nor the download's.
  const db = dbSpent(dbBefore, await dbTime(runtime), 'reports/');
  delete db['reports/get'];
  delete db['reports/chunks'];
  const file = await download(client, `/v1/audit/reports/${view.id}/content`);
  gc();
  const requested = Date.parse(view.requested_at);
  return {
    type,
    format,
    status: view.status,
    seconds: (Date.parse(view.completed_at!) - requested) / 1000,
    queued_s: (Date.parse(view.started_at!) - requested) / 1000,
    rows: view.row_count,
    bytes: file.bytes,
    lines: file.lines,
    download_s: file.seconds,
    heap_baseline_mb: baseline / MB,
    heap_growth_mb: (peak - baseline) / MB,
    heap_live_mb: (live - baseline) / MB,
    heap_retained_mb: (process.memoryUsage().heapUsed - baseline) / MB,
    db,
  };
}

async function reports(
  runtime: Runtime,
  client: BenchClient,
  now: number,
): Promise<{
  organisation: Record<string, number>;
  index_s: number;
  runs: ReportRun[];
}> {
  const organisation = await loadOrganisation(runtime, now);
  // The bulk load bypasses the change feed: the decision index (which the access review reads)
  // is built again from the graph, and the privilege factors it derives are written before the
  // reports, as a running service would have them.
  const t0 = Date.now();
  await runtime.engine.sync.load();
  await runtime.risk.privileges.refresh();
  const indexS = (Date.now() - t0) / 1000;
  const busy = await settle();
  log(
    `decision index rebuilt and privilege risk refreshed in ${indexS.toFixed(1)} s ` +
      `(event loop then ${Math.round(busy * 100)}% busy)`,
  );

  const runs: ReportRun[] = [];
  for (const type of TYPES) {
    for (const format of FORMATS) {
      const mine: ReportRun[] = [];
      for (let round = 1; round <= REPORT_ROUNDS; round += 1) {
        const r = await report(
          runtime,
          client,
          type,
          format,
          round === 1 ? `report-${type}-${format}` : undefined,
        );
        mine.push(r);
        log(
          `report ${type} (${format}) ${round}/${REPORT_ROUNDS}: ${r.seconds.toFixed(1)} s ` +
            `(queued ${r.queued_s.toFixed(1)} s), ${r.rows} rows, ${(r.bytes / MB).toFixed(1)} MB ` +
            `(downloaded in ${r.download_s.toFixed(1)} s), heap +${r.heap_growth_mb.toFixed(0)} MB at most, ` +
            `+${r.heap_live_mb.toFixed(0)} MB after full collections, +${r.heap_retained_mb.toFixed(0)} MB retained\n  in Neo4j: ${dbSummary(r.db)}`,
        );
      }
      runs.push(...mine);
      const expectedLines = (r: ReportRun): number => (format === 'csv' ? r.rows + 1 : r.rows + 2);
      const mismatched = mine.filter((r) => r.lines !== expectedLines(r)).length;
      const last = mine[mine.length - 1]!;
      // The audit log's size is its events', not the organisation's.
      const full =
        type === 'audit_log' ? AUDIT_EVENTS >= REPORT_TARGET_SIZE : PRINCIPALS >= REPORT_TARGET_SIZE;
      const targets = (target: number) =>
        full ? { target, direction: 'max' as const, on: 'median' as const } : {};
      table.add({
        scenario: `report ${type} (${format})`,
        unit: 's',
        median: median(mine.map((r) => r.seconds)),
        ...targets(REPORT_TARGET_S),
        rounds: mine.map((r) => r.seconds),
        note: [
          `${last.rows} rows, ${(last.bytes / MB).toFixed(1)} MB`,
          mismatched > 0 ? `${mismatched} files whose line count is not the row count's` : '',
          full
            ? ''
            : `the targets are for ${REPORT_TARGET_SIZE} ${type === 'audit_log' ? 'events' : 'principals'}`,
        ]
          .filter(Boolean)
          .join('; '),
      });
      table.add({
        scenario: `  heap growth, highest heapUsed`,
        unit: 'MB',
        median: median(mine.map((r) => r.heap_growth_mb)),
        ...targets(REPORT_TARGET_MB),
        rounds: mine.map((r) => r.heap_growth_mb),
        note: `over ${mine.map((r) => fmt(r.heap_baseline_mb, 0)).join('/')} MB before`,
      });
      table.add({
        scenario: `  heap growth, after full collections`,
        unit: 'MB',
        median: median(mine.map((r) => r.heap_live_mb)),
        ...targets(REPORT_TARGET_MB),
        rounds: mine.map((r) => r.heap_live_mb),
        note: `retained after the report: ${mine.map((r) => fmt(r.heap_retained_mb, 0)).join('/')} MB`,
      });
    }
  }
  return { organisation, index_s: indexS, runs };
}

// ---- main ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (!(globalThis as { gc?: unknown }).gc) log('note: run node with --expose-gc for the heap figures');
  const now = Date.now();
  const config = benchConfig({
    WEBHOOKS_ALLOW_INSECURE_URLS: 'true',
    WEBHOOK_POLL_INTERVAL_MS: String(POLL_MS),
  });
  await withBenchService(
    { config, empty: 'MATCH (n) WHERE n:Principal OR n:Webhook RETURN count(n) AS n' },
    (service) => run(service, config, now),
  );
}

async function run({ runtime, client }: BenchService, config: Config, now: number): Promise<void> {
  let drains: Record<string, DrainRound[]> | undefined;
  if (PARTS.has('delivery')) {
    log(
      `delivery: backlogs of ${EVENTS} events to 1 and to ${WEBHOOKS} webhooks, ${ROUNDS} rounds each ` +
        `(WEBHOOK_POLL_INTERVAL_MS=${POLL_MS}, WEBHOOK_CONCURRENCY=${config.webhooks.concurrency})`,
    );
    drains = await delivery(runtime, client, now);
    await clearDeliveryData(runtime);
  }
  let reported: Awaited<ReturnType<typeof reports>> | undefined;
  if (PARTS.has('reports')) reported = await reports(runtime, client, now);

  table.print(46);
  log('');
  log(
    `machine: ${os.cpus().length} cores, node ${process.version}; reports in ${FORMATS.join(' and ')}, ` +
      `${REPORT_ROUNDS} round(s) each`,
  );
  const file = await writeResults('delivery', {
    shape: {
      EVENTS,
      WEBHOOKS,
      ROUNDS,
      EVENT_BATCH,
      POLL_MS,
      PRINCIPALS,
      GROUPS,
      RESOURCES,
      POLICIES,
      AUDIT_EVENTS,
      FORMATS,
      REPORT_ROUNDS,
    },
    machine: { cpus: os.cpus().length, node: process.version, load: os.loadavg() },
    delivery: drains,
    reports: reported,
    table: table.rows,
  });
  log(`results written to ${file}`);
}

if (process.argv[2] === 'receiver') {
  runReceiver();
} else {
  benchMain(main);
}
