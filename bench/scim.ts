/**
 * SCIM benchmark: the connector feature's targets, measured end to end over HTTP on a fresh
 * embedded Neo4j (or the empty database at NEO4J_URI):
 *
 * 1. provisioning through SCIM: BENCH_SCIM_USERS users created with `POST /scim/v2/Users` by
 *    BENCH_SCIM_CLIENTS concurrent clients (bench/scim-client.ts, a process of its own), bodies
 *    as Microsoft Entra sends them (userName, name, displayName, emails, active, externalId,
 *    title, the enterprise extension with department, employeeNumber, costCenter and, for most,
 *    a manager provisioned earlier), each round into a fresh connector: users/s and latency;
 * 2. `POST /v1/connectors/{id}/sync` of a JSON-lines snapshot of BENCH_SYNC_USERS users and
 *    BENCH_SYNC_GROUPS groups with members (the directory of bench/directory.ts), polled until
 *    it completes, into a fresh connector each round: seconds from the POST to completion, and
 *    the counts the sync reports;
 * 3. `GET /scim/v2/Users?filter=...` against the connector holding those users, for the filters
 *    provisioning clients send (`userName eq`, `externalId eq`, `id eq`) and richer ones, and
 *    `GET /scim/v2/Groups?filter=displayName eq ...`, with and without the members.
 *
 * Where the sync endpoint is not there (404), its row says so and the users of (3) are written
 * with the bulk loader instead (the properties SCIM keeps: connector_source, connector_ref,
 * user_name, scim), their groups created through `POST /scim/v2/Groups`.
 *
 *   npm run bench:scim                      # embedded Neo4j in a throwaway directory
 *   NEO4J_URI=bolt://... npm run bench:scim # an existing (empty) Neo4j
 *
 * Knobs: BENCH_SCIM_USERS (5000 per provisioning round), BENCH_SCIM_CLIENTS (8),
 * BENCH_SCIM_WARMUP (500 users provisioned into a connector of their own before the rounds),
 * BENCH_ROUNDS (3: provisioning rounds and filter rounds), BENCH_SYNC_USERS (100000),
 * BENCH_SYNC_GROUPS (300), BENCH_SYNC_MEMBERSHIPS (groups per user; unset: one or two, half and
 * half), BENCH_SYNC_ROUNDS (1; 0 skips the sync and bulk-loads the users of
 * (3)), BENCH_SYNC_TIMEOUT_S (1800), BENCH_REQUESTS
 * (200 per filter scenario and round), BENCH_BATCH (1000 rows per bulk-load transaction).
 * BENCH_CPU_PROFILE (a directory: a CPU profile of the first sync). Results also go to
 * bench/results/scim-*.json.
 */
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Runtime } from '../src/runtime.js';
import { PATCH_SCHEMA } from '../src/scim/schema.js';
import { mappedAttributes, mappedMetadata, readUser, userFields } from '../src/scim/users.js';
import { BulkLoader, type SeedPrincipal } from '../src/seed/bulk.js';
import type { BenchClient } from './client.js';
import {
  ask,
  benchMain,
  type BenchService,
  cypher,
  fmt,
  forkBench,
  loadPrincipals,
  log,
  measureRounds,
  median,
  env,
  percentile,
  profiled,
  ResultTable,
  withBenchService,
  writeResults,
} from './harness.js';
import {
  type Connector,
  createConnector,
  type Directory,
  generateDirectory,
  groupResource,
  snapshot,
  userResource,
} from './directory.js';
import { rng, seededId } from './org.js';
import type { ProvisionResult, ProvisionRun } from './scim-client.js';
import type { PollResult, PollRun } from './sync-poller.js';

const USERS = env('BENCH_SCIM_USERS', 5_000);
const CLIENTS = env('BENCH_SCIM_CLIENTS', 8);
const WARMUP_USERS = Math.min(env('BENCH_SCIM_WARMUP', 500), USERS);
const ROUNDS = Math.max(1, env('BENCH_ROUNDS', 3));
const SYNC_USERS = env('BENCH_SYNC_USERS', 100_000);
const SYNC_GROUPS = env('BENCH_SYNC_GROUPS', 300);
/** Groups each user of the snapshot is in: 0 draws one or two (half and half). */
const SYNC_MEMBERSHIPS = env('BENCH_SYNC_MEMBERSHIPS', 0);
/** 0 skips the sync: the users of (3) are then bulk-loaded. */
const SYNC_ROUNDS = Math.max(0, env('BENCH_SYNC_ROUNDS', 1));
const SYNC_TIMEOUT_S = env('BENCH_SYNC_TIMEOUT_S', 1_800);
const REQUESTS = env('BENCH_REQUESTS', 200);
const BATCH = env('BENCH_BATCH', 1_000);
const WARMUP_REQUESTS = 20;

/** The targets: users/s provisioned, seconds for a sync of 100,000 users, p99 ms of a filtered list. */
const PROVISION_TARGET = 500;
const SYNC_TARGET_S = 40;
const SYNC_TARGET_USERS = 100_000;
const FILTER_TARGET_MS = 30;

const table = new ResultTable();

// ---- HTTP ------------------------------------------------------------------------------------------

/**
 * A SCIM read with the connector's token, timed from sending until the answer's text has been
 * read; parsed after.
 */
async function scimGet(connector: Connector, path: string): Promise<{ ms: number; body: ScimList }> {
  const answer = await connector.client.timed('GET', path, undefined, {
    accept: 'application/scim+json',
    read: 'text',
  });
  return { ms: answer.ms, body: answer.json<ScimList>() };
}

interface ScimList {
  totalResults: number;
  Resources: { id: string; [key: string]: unknown }[];
}

// ---- 1. provisioning ------------------------------------------------------------------------------

interface ProvisionRound {
  connector: string;
  users: number;
  created: number;
  seconds: number;
  users_per_s: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  statuses: Record<string, number>;
  errors: string[];
  managers: ProvisionResult['managers'];
}

async function provisioning(
  admin: BenchClient,
): Promise<{ warmup: ProvisionRound | null; rounds: ProvisionRound[] }> {
  const dir = generateDirectory(USERS, 0, 101);
  const users = dir.users.map((u) => ({
    body: userResource(u),
    externalId: u.externalId,
    manager: u.manager,
  }));
  const client = forkBench('scim-client.ts');
  try {
    const once = async (label: string, count: number): Promise<ProvisionRound> => {
      const connector = await createConnector(admin, label);
      const spec: ProvisionRun = {
        scimBase: `${admin.base}/scim/v2`,
        token: connector.token,
        clients: CLIENTS,
        users: users.slice(0, count),
      };
      const result = await ask<ProvisionResult>(client, spec);
      const sorted = [...result.latencies].sort((a, b) => a - b);
      return {
        connector: connector.name,
        users: count,
        created: result.created,
        seconds: result.seconds,
        users_per_s: result.created / result.seconds,
        p50_ms: percentile(sorted, 50),
        p99_ms: percentile(sorted, 99),
        max_ms: sorted.at(-1) ?? NaN,
        statuses: result.statuses,
        errors: result.errors,
        managers: result.managers,
      };
    };
    const describe = (r: ProvisionRound): string =>
      `${r.created}/${r.users} users in ${r.seconds.toFixed(1)} s = ${Math.round(r.users_per_s)}/s ` +
      `(p50 ${fmt(r.p50_ms)} ms, p99 ${fmt(r.p99_ms)} ms, max ${fmt(r.max_ms)} ms; managers named by id ` +
      `${r.managers.by_id}, by externalId ${r.managers.by_external_id}; answers ${JSON.stringify(r.statuses)})`;
    let warmup: ProvisionRound | null = null;
    if (WARMUP_USERS > 0) {
      warmup = await once('warmup', WARMUP_USERS);
      log(`provisioning warm-up: ${describe(warmup)}`);
    }
    const rounds: ProvisionRound[] = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      const r = await once(`prov${round}`, USERS);
      rounds.push(r);
      log(`provisioning round ${round}/${ROUNDS}: ${describe(r)}`);
      for (const e of r.errors) log(`  error: ${e}`);
    }
    return { warmup, rounds };
  } finally {
    client.kill();
  }
}

// ---- 2. sync ----------------------------------------------------------------------------------------

interface SyncRound {
  connector: Connector;
  /** From the POST until the 202 arrived (upload and acceptance). */
  accepted_s: number;
  /** From the POST until the sync was seen completed (or failed). */
  seconds: number;
  status: string;
  counts: unknown;
  errors: unknown[];
  error: unknown;
  progress: unknown;
  /** Seconds in each phase the progress showed, as polled. */
  phases_s: Record<string, number>;
  /** The status polls of a separate process while the sync ran (bench/sync-poller.ts). */
  polls: {
    answered: number;
    failed: number;
    causes: string[];
    p50_ms: number;
    p99_ms: number;
    max_ms: number;
  };
  /** The service's event-loop delay from the POST to completion. */
  loop_delay_ms: { p99: number; max: number };
  /** The service process's memory over the sync, above what it was before the POST. */
  memory_mb: { rss_peak: number; heap_peak: number; before_rss: number; before_heap: number };
}

type SyncAttempt = { available: true; round: SyncRound } | { available: false; status: number; text: string };

/** Peaks of the process's memory, sampled every 50 ms until stopped. */
function memoryPeaks(): () => SyncRound['memory_mb'] {
  const mb = (bytes: number): number => Number((bytes / 1024 / 1024).toFixed(1));
  const start = process.memoryUsage();
  let rss = start.rss;
  let heap = start.heapUsed;
  const timer = setInterval(() => {
    const now = process.memoryUsage();
    rss = Math.max(rss, now.rss);
    heap = Math.max(heap, now.heapUsed);
  }, 50);
  return () => {
    clearInterval(timer);
    return {
      rss_peak: mb(rss - start.rss),
      heap_peak: mb(heap - start.heapUsed),
      before_rss: mb(start.rss),
      before_heap: mb(start.heapUsed),
    };
  };
}

/** `body` is sent as bytes made before the measurement, so that encoding it is not counted. */
async function sync(admin: BenchClient, body: Buffer, label: string): Promise<SyncAttempt> {
  const connector = await createConnector(admin, label);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const memory = memoryPeaks();
  const t0 = process.hrtime.bigint();
  const elapsed = (): number => Number(process.hrtime.bigint() - t0) / 1e9;
  try {
    const posted = await admin.send('POST', `/v1/connectors/${connector.id}/sync`, body, {
      contentType: 'application/x-ndjson',
    });
    const accepted = elapsed();
    if (posted.status === 404 || posted.status === 405) {
      return { available: false, status: posted.status, text: posted.text.slice(0, 300) };
    }
    if (posted.status !== 202) {
      throw new Error(
        `POST /v1/connectors/{id}/sync answered ${posted.status}: ${posted.text.slice(0, 500)}`,
      );
    }
    const started = posted.json as { id: string };
    const location = posted.headers.get('location') ?? `/v1/connectors/${connector.id}/sync/${started.id}`;
    const poller = forkBench('sync-poller.ts');
    let polled: PollResult;
    try {
      const run: PollRun = {
        url: new URL(location, admin.base).href,
        token: await admin.token(),
        intervalMs: 250,
        timeoutS: SYNC_TIMEOUT_S,
      };
      polled = await ask<PollResult>(poller, run);
    } finally {
      poller.kill();
    }
    const seconds = accepted + polled.seconds;
    const state = polled.final;
    if (!state) throw new Error(`the sync did not finish within ${SYNC_TIMEOUT_S} s`);
    const phases = Object.fromEntries(
      polled.phases.map((p, i) => [
        p.phase,
        Number(((polled.phases[i + 1]?.at ?? polled.seconds) - p.at).toFixed(2)),
      ]),
    );
    const sorted = [...polled.latencies].sort((a, b) => a - b);
    return {
      available: true,
      round: {
        connector,
        accepted_s: accepted,
        seconds,
        status: state.status,
        counts: state.counts ?? null,
        errors: (state.errors ?? []).slice(0, 10),
        error: state.error ?? null,
        progress: state.progress ?? null,
        phases_s: phases,
        polls: {
          answered: polled.latencies.length,
          failed: polled.failures,
          causes: polled.failureCauses,
          p50_ms: percentile(sorted, 50),
          p99_ms: percentile(sorted, 99),
          max_ms: sorted.at(-1) ?? NaN,
        },
        loop_delay_ms: { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 },
        memory_mb: memory(),
      },
    };
  } finally {
    loop.disable();
    memory();
  }
}

// ---- the connector of (3) without the sync --------------------------------------------------------

/**
 * The directory's users written with the bulk loader as `POST /Users` would have stored them
 * (the same SCIM reading and mapping), in creation order over the last three years, then its
 * groups created through SCIM with their members.
 */
async function bulkConnector(
  runtime: Runtime,
  admin: BenchClient,
  dir: Directory,
  now: number,
): Promise<Connector> {
  const connector = await createConnector(admin, 'bulk');
  const start = now - 3 * 365 * 86_400_000;
  const span = now - start - 86_400_000;
  const created = dir.users.map((_, i) => start + Math.floor((i * span) / dir.users.length));
  const ids = dir.users.map((_, i) => seededId('prn', i, created[i]!));
  const rows: SeedPrincipal[] = dir.users.map((u, i) => {
    const managerId = u.manager === null ? null : ids[u.manager]!;
    const scim = readUser(userResource(u, managerId ?? undefined));
    const fields = userFields(scim);
    return {
      id: ids[i]!,
      type: 'USER',
      name: fields.name,
      ...(fields.email ? { email: fields.email } : {}),
      attributes: mappedAttributes(fields, managerId),
      metadata: mappedMetadata(fields),
      connectorSource: connector.name,
      ...(fields.externalId ? { connectorId: fields.externalId } : {}),
      createdAt: new Date(created[i]!).toISOString(),
      status: fields.active ? 'active' : 'suspended',
      extra: {
        connector_ref: connector.id,
        user_name: fields.userName.toLowerCase(),
        scim: JSON.stringify(scim),
      },
    };
  });
  const t0 = Date.now();
  await loadPrincipals(new BulkLoader(runtime.db), rows, { batch: BATCH, loaders: 2 });
  const usersS = (Date.now() - t0) / 1000;
  const chunk = 5_000;
  for (const g of dir.groups) {
    const members = g.members.map((m) => ({ value: ids[m]! }));
    const { id } = await connector.client.json<{ id: string }>(
      'POST',
      '/scim/v2/Groups',
      { ...groupResource({ ...g, members: [] }, () => ''), members: members.slice(0, chunk) },
      { contentType: 'application/scim+json', expect: [201] },
    );
    for (let from = chunk; from < members.length; from += chunk) {
      await connector.client.json(
        'PATCH',
        `/scim/v2/Groups/${id}`,
        {
          schemas: [PATCH_SCHEMA],
          Operations: [{ op: 'add', path: 'members', value: members.slice(from, from + chunk) }],
        },
        { contentType: 'application/scim+json', expect: [200, 204] },
      );
    }
  }
  log(
    `bulk-loaded ${rows.length} users in ${usersS.toFixed(1)} s and created ${dir.groups.length} groups ` +
      `(${dir.memberships} memberships) in ${((Date.now() - t0) / 1000 - usersS).toFixed(1)} s`,
  );
  return connector;
}

// ---- 3. filters -------------------------------------------------------------------------------------

interface FilterScenario {
  name: string;
  path: () => { path: string; expect?: (list: ScimList) => boolean };
}

async function filters(
  runtime: Runtime,
  connector: Connector,
  dir: Directory,
): Promise<Record<string, { medians: number[]; p99s: number[]; unexpected: number }>> {
  const [range] = await cypher(
    runtime.db,
    `MATCH (p:Principal)
     WHERE p.connector_ref = $connector AND p.type = 'USER' AND p.status IN ['active', 'suspended']
     RETURN count(p) AS n, min(p.updated_at) AS first, max(p.updated_at) AS last`,
    { connector: connector.id },
  );
  const sample = await cypher(
    runtime.db,
    `MATCH (p:Principal)
     WHERE p.connector_ref = $connector AND p.type = 'USER' AND p.status IN ['active', 'suspended']
     WITH p ORDER BY rand() LIMIT 2000
     RETURN p.id AS id`,
    { connector: connector.id },
  );
  const ids = sample.map((r) => r['id'] as string);
  const first = Date.parse(range?.['first'] as string);
  const last = Date.parse(range?.['last'] as string);
  log(
    `filters on ${connector.name}: ${range?.['n'] as number} users, last modified ` +
      `${new Date(first).toISOString()} .. ${new Date(last).toISOString()}`,
  );
  const random = rng(7);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const positions = Array.from({ length: dir.users.length }, (_, i) => i);
  const users = (filter: string, extra = ''): string =>
    `/scim/v2/Users?filter=${encodeURIComponent(filter)}${extra}`;
  const groups = (filter: string, extra = ''): string =>
    `/scim/v2/Groups?filter=${encodeURIComponent(filter)}${extra}`;
  const one = (list: ScimList): boolean => list.totalResults === 1 && list.Resources.length === 1;
  const some = (list: ScimList): boolean => list.totalResults >= 1;
  const scenarios: FilterScenario[] = [
    {
      name: 'Users userName eq',
      path: () => ({ path: users(`userName eq "${pick(dir.users).userName}"`), expect: one }),
    },
    {
      name: 'Users externalId eq',
      path: () => ({ path: users(`externalId eq "${pick(dir.users).externalId}"`), expect: one }),
    },
    { name: 'Users id eq', path: () => ({ path: users(`id eq "${pick(ids)}"`), expect: one }) },
    {
      name: 'Users userName sw and active eq true',
      path: () => {
        const at = pick(positions);
        const u = dir.users[at]!;
        const prefix = u.userName.slice(0, u.userName.indexOf(String(at)) + 1);
        return {
          path: users(`userName sw "${prefix}" and active eq true`),
          ...(u.active ? { expect: some } : {}),
        };
      },
    },
    {
      name: 'Users meta.lastModified gt, count=10',
      path: () => {
        const at = new Date(first + Math.floor(random() * Math.max(1, last - first))).toISOString();
        return { path: users(`meta.lastModified gt "${at}"`, '&count=10') };
      },
    },
    {
      name: 'Users title eq and userName co',
      path: () => {
        const u = pick(dir.users);
        const part = u.familyName.replace(/\s+/g, '').toLowerCase();
        return { path: users(`title eq "${u.title}" and userName co "${part}"`), expect: some };
      },
    },
  ];
  if (dir.groups.length > 0) {
    scenarios.push(
      {
        name: 'Groups displayName eq (members included)',
        path: () => ({ path: groups(`displayName eq "${pick(dir.groups).displayName}"`), expect: one }),
      },
      {
        name: 'Groups displayName eq, members excluded',
        path: () => ({
          path: groups(`displayName eq "${pick(dir.groups).displayName}"`, '&excludedAttributes=members'),
          expect: one,
        }),
      },
    );
  }
  /** Answers that were not what the filter should have found, by scenario. */
  const unexpected: Record<string, number> = Object.fromEntries(scenarios.map((s) => [s.name, 0]));
  const call = async (s: FilterScenario): Promise<number> => {
    const request = s.path();
    const { ms, body } = await scimGet(connector, request.path);
    if (request.expect && !request.expect(body)) {
      if (unexpected[s.name] === 0) {
        log(`  ${s.name}: ${request.path} answered totalResults ${body.totalResults}`);
      }
      unexpected[s.name]! += 1;
    }
    return ms;
  };
  const measured = await measureRounds(
    scenarios.map((s) => ({ name: s.name, count: REQUESTS, warmup: WARMUP_REQUESTS, next: () => call(s) })),
    { rounds: ROUNDS, afterRound: (round) => log(`filter round ${round + 1}/${ROUNDS} done`) },
  );
  return Object.fromEntries(
    scenarios.map(({ name }) => [
      name,
      { medians: measured[name]!.medians, p99s: measured[name]!.p99s, unexpected: unexpected[name]! },
    ]),
  );
}

// ---- main ---------------------------------------------------------------------------------------------

async function run({ runtime, client: admin }: BenchService, now: number): Promise<void> {
  // --- 1 ---
  log(`provisioning: ${USERS} users per round through POST /scim/v2/Users, ${CLIENTS} clients`);
  const provisioned = await provisioning(admin);
  const rates = provisioned.rounds.map((r) => r.users_per_s);
  const failures = provisioned.rounds.reduce((n, r) => n + (r.users - r.created), 0);
  table.add({
    scenario: `provisioning, POST /Users, ${CLIENTS} clients`,
    unit: 'users/s',
    median: median(rates),
    target: PROVISION_TARGET,
    direction: 'min',
    on: 'median',
    rounds: rates,
    note: `${USERS} users per round${failures > 0 ? `; ${failures} requests failed` : ''}`,
  });
  table.add({
    scenario: `  POST /Users latency at that load`,
    unit: 'ms',
    median: median(provisioned.rounds.map((r) => r.p50_ms)),
    p99: median(provisioned.rounds.map((r) => r.p99_ms)),
    rounds: provisioned.rounds.map((r) => r.p99_ms),
    note: 'per round: p99',
  });

  // --- 2 ---
  log(`generating a directory of ${SYNC_USERS} users and ${SYNC_GROUPS} groups`);
  const dir = generateDirectory(SYNC_USERS, SYNC_GROUPS, 202, SYNC_MEMBERSHIPS);
  const body = Buffer.from(snapshot(dir));
  const bytes = Buffer.byteLength(body);
  log(
    `snapshot: ${SYNC_USERS + SYNC_GROUPS} lines, ${(bytes / 1024 / 1024).toFixed(1)} MB, ` +
      `${dir.memberships} memberships`,
  );
  const syncName = `sync of ${SYNC_USERS} users + ${SYNC_GROUPS} groups`;
  const syncRounds: SyncRound[] = [];
  let unavailable: { status: number; text: string } | undefined;
  for (let round = 1; round <= SYNC_ROUNDS; round += 1) {
    log(`sync round ${round}/${SYNC_ROUNDS}: POST /v1/connectors/{id}/sync`);
    const attempt = await profiled(round === 1 ? 'scim-sync' : undefined, () =>
      sync(admin, body, `sync${round}`),
    );
    if (!attempt.available) {
      unavailable = attempt;
      log(`  not available: the endpoint answered ${attempt.status} ${attempt.text}`);
      break;
    }
    const r = attempt.round;
    syncRounds.push(r);
    log(
      `  ${r.status} in ${r.seconds.toFixed(1)} s (accepted after ${r.accepted_s.toFixed(1)} s): ` +
        `counts ${JSON.stringify(r.counts)}${r.error ? `, error ${JSON.stringify(r.error)}` : ''}`,
    );
    log(`  seconds per phase: ${JSON.stringify(r.phases_s)}`);
    log(
      `  status polls: ${r.polls.answered} answered, ${r.polls.failed} failed, p99 ${fmt(r.polls.p99_ms)} ms, ` +
        `max ${fmt(r.polls.max_ms)} ms; event-loop delay p99 ${fmt(r.loop_delay_ms.p99)} ms, ` +
        `max ${fmt(r.loop_delay_ms.max)} ms; memory peak +${r.memory_mb.rss_peak} MB RSS, ` +
        `+${r.memory_mb.heap_peak} MB heap`,
    );
    for (const cause of r.polls.causes) log(`  poll failed: ${cause}`);
    for (const e of r.errors.slice(0, 3)) log(`  error: ${JSON.stringify(e)}`);
  }
  const completed = syncRounds.filter((r) => r.status === 'completed');
  if (SYNC_ROUNDS === 0) {
    table.add({
      scenario: syncName,
      unit: 's',
      median: NaN,
      rounds: [],
      note: 'skipped: BENCH_SYNC_ROUNDS=0',
    });
  } else if (unavailable) {
    table.add({
      scenario: syncName,
      unit: 's',
      median: NaN,
      rounds: [],
      note: `not available: POST /v1/connectors/{id}/sync answered ${unavailable.status}`,
    });
  } else {
    const seconds = completed.map((r) => r.seconds);
    const full = SYNC_USERS >= SYNC_TARGET_USERS;
    table.add({
      scenario: syncName,
      unit: 's',
      median: seconds.length > 0 ? median(seconds) : NaN,
      ...(full ? { target: SYNC_TARGET_S, direction: 'max' as const, on: 'median' as const } : {}),
      rounds: seconds,
      note: [
        completed.length < syncRounds.length ? `${syncRounds.length - completed.length} failed` : '',
        full ? '' : `the ${SYNC_TARGET_S} s target is for ${SYNC_TARGET_USERS} users`,
      ]
        .filter(Boolean)
        .join('; '),
    });
    const syncRates = completed.map((r) => SYNC_USERS / r.seconds);
    table.add({
      scenario: `  sync rate`,
      unit: 'users/s',
      median: syncRates.length > 0 ? median(syncRates) : NaN,
      target: Math.ceil(SYNC_TARGET_USERS / SYNC_TARGET_S),
      direction: 'min',
      on: 'median',
      rounds: syncRates,
    });
    table.add({
      scenario: '  status polls failed during the sync',
      unit: 'polls',
      median: median(syncRounds.map((r) => r.polls.failed)),
      rounds: syncRounds.map((r) => r.polls.failed),
      note: 'must be 0',
    });
    table.add({
      scenario: '  status poll latency during the sync',
      unit: 'ms',
      median: median(syncRounds.map((r) => r.polls.p50_ms)),
      p99: median(syncRounds.map((r) => r.polls.p99_ms)),
      rounds: syncRounds.map((r) => r.polls.max_ms),
      note: 'rounds: max',
    });
    table.add({
      scenario: '  service event-loop delay during the sync',
      unit: 'ms',
      median: NaN,
      p99: median(syncRounds.map((r) => r.loop_delay_ms.p99)),
      rounds: syncRounds.map((r) => r.loop_delay_ms.max),
      note: 'rounds: max',
    });
    table.add({
      scenario: '  memory above the start, peak during the sync',
      unit: 'MB heap',
      median: median(syncRounds.map((r) => r.memory_mb.heap_peak)),
      rounds: syncRounds.map((r) => r.memory_mb.heap_peak),
      note: `RSS peak +${median(syncRounds.map((r) => r.memory_mb.rss_peak))} MB (the bench's own snapshot text is held throughout)`,
    });
  }

  // --- 3 ---
  const synced = completed.at(-1);
  let source: 'sync' | 'bulk';
  let connector: Connector;
  if (synced) {
    source = 'sync';
    connector = synced.connector;
  } else {
    source = 'bulk';
    log(`no completed sync: loading the ${SYNC_USERS} users with the bulk loader instead`);
    connector = await bulkConnector(runtime, admin, dir, now);
  }
  const check = await scimGet(connector, '/scim/v2/Users?count=0');
  const groupCheck = await scimGet(connector, '/scim/v2/Groups?count=0&excludedAttributes=members');
  log(
    `the connector's SCIM endpoint lists ${check.body.totalResults} users (of ${SYNC_USERS}) and ` +
      `${groupCheck.body.totalResults} groups (of ${SYNC_GROUPS})`,
  );
  const filtered = await filters(runtime, connector, dir);
  for (const [name, r] of Object.entries(filtered)) {
    table.add({
      scenario: `GET ${name}`,
      unit: 'ms',
      median: median(r.medians),
      p99: median(r.p99s),
      target: FILTER_TARGET_MS,
      direction: 'max',
      on: 'p99',
      rounds: r.p99s,
      ...(r.unexpected > 0 ? { note: `${r.unexpected} answers not as expected` } : {}),
    });
  }

  table.print(46);
  log('');
  log(
    `filtered lists: ${REQUESTS} requests per scenario and round, ${ROUNDS} rounds, against ` +
      `${check.body.totalResults} users written by ${source === 'sync' ? 'the sync' : 'the bulk loader'}; ` +
      `machine: ${os.cpus().length} cores, node ${process.version}`,
  );

  const file = await writeResults('scim', {
    shape: {
      USERS,
      CLIENTS,
      WARMUP_USERS,
      ROUNDS,
      SYNC_USERS,
      SYNC_GROUPS,
      SYNC_ROUNDS,
      REQUESTS,
      BATCH,
    },
    machine: { cpus: os.cpus().length, node: process.version, load: os.loadavg() },
    provisioning: provisioned,
    sync: {
      available: unavailable === undefined,
      ...(unavailable ? { answer: unavailable } : {}),
      snapshot: { lines: SYNC_USERS + SYNC_GROUPS, bytes, memberships: dir.memberships },
      rounds: syncRounds.map(({ connector: c, ...rest }) => ({ connector: c.name, ...rest })),
    },
    filters: {
      connector: connector.name,
      written_by: source,
      users: check.body.totalResults,
      groups: groupCheck.body.totalResults,
      scenarios: filtered,
    },
    table: table.rows,
  });
  log(`results written to ${file}`);
}

async function main(): Promise<void> {
  const now = Date.now();
  await withBenchService(
    { empty: "MATCH (p:Principal) WHERE p.type = 'USER' RETURN count(p) AS n" },
    (service) => run(service, now),
  );
}

benchMain(main);
