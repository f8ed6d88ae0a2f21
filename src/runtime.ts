import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { AuditRepository } from './audit/repository.js';
import { ClientService } from './auth/clients.js';
import { resolveKeyEncryptionKey } from './auth/key-encryption.js';
import { OAuthServer } from './auth/oauth.js';
import { Revocations } from './auth/revocations.js';
import { SigningKeys } from './auth/signing-keys.js';
import { TokenService } from './auth/tokens.js';
import { CLOCK_TOLERANCE_S, TokenVerifier } from './auth/verifier.js';
import { AuthZenService } from './authzen/service.js';
import type { Config } from './config/config.js';
import { ConnectorService, connectorSyncStore } from './connectors/service.js';
import { ConnectorSyncService } from './scim/sync-service.js';
import { Catalogue } from './db/catalogue.js';
import { Database } from './db/database.js';
import { createDriver } from './db/driver.js';
import { loadMigrations, migrate } from './db/migrations.js';
import { AccessService } from './decisions/access-service.js';
import { PrivilegeRisk } from './risk/privileges.js';
import { PolicyIndex } from './decisions/policy-index.js';
import { ThreadRecordWriter } from './decisions/record-writer.js';
import { DecisionLog } from './decisions/records.js';
import { DecisionService } from './decisions/service.js';
import { authTasks } from './auth/tasks.js';
import { decisionTasks } from './decisions/tasks.js';
import { delegationTasks } from './delegations/tasks.js';
import { feedTasks } from './events/tasks.js';
import { policyTasks } from './policies/tasks.js';
import { reportTasks } from './reports/tasks.js';
import { riskTasks } from './risk/tasks.js';
import { webhookTasks } from './webhooks/tasks.js';
import { SimulationService } from './decisions/simulation.js';
import { DecisionThreads } from './decisions/decision-thread.js';
import { IndexSync } from './decisions/sync.js';
import { AccessAsOf } from './access-history/as-of.js';
import { AccessHistoryRecorder } from './access-history/recorder.js';
import type { ReadyPart } from './access-history/repository.js';
import { ACCESS_HISTORY_THREAD } from './access-history/thread.js';
import { AccessHistoryService } from './access-history/service.js';
import { accessHistoryTasks } from './access-history/tasks.js';
import { within } from './time.js';
import { LoopDelay } from './pacing/loop-delay.js';
import { Pacer } from './pacing/pacer.js';
import { ConsistencyTokens } from './consistency/tokens.js';
import { ChangeFeed, type ChangeRelay } from './events/feed.js';
import { EventSink } from './events/sink.js';
import { GroupService } from './groups/service.js';
import { GroupWrites } from './groups/writes.js';
import { principalLookup } from './principals/lookup.js';
import { PrincipalWrites, principalRiskStore } from './principals/writes.js';
import { JobRunner } from './jobs/runner.js';
import type { Logger } from './logging/logger.js';
import { createMetrics, observeAccessHistory, observeEngine, type Metrics } from './metrics.js';
import { DelegationRisk } from './risk/delegations.js';
import { DormancyRisk } from './risk/dormancy.js';
import { OwnershipRisk } from './risk/ownership.js';
import { assessRisk } from './risk/score.js';
import { SearchPlans } from './principals/search/plans.js';
import { PolicyService } from './policies/service.js';
import { PrincipalService } from './principals/service.js';
import { createRateLimiting, type RateLimiting } from './ratelimit/index.js';
import { ReportGenerator, REPORT_JOB } from './reports/generator.js';
import { ReportService } from './reports/service.js';
import { DelegationService } from './delegations/service.js';
import { ResourceService } from './resources/service.js';
import { ScimGroupService } from './scim/groups-service.js';
import { ScimSync } from './scim/sync.js';
import { ScimUserService } from './scim/users-service.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { WebhookService } from './webhooks/service.js';
import { WebhookTransport } from './webhooks/transport.js';

/** The domain services the HTTP routes call. */
export interface Services {
  audit: AuditRepository;
  accessHistory: AccessHistoryService;
  asOf: AccessAsOf;
  clients: ClientService;
  connectors: ConnectorService;
  scimUsers: ScimUserService;
  scimGroups: ScimGroupService;
  connectorSync: ConnectorSyncService;
  keys: SigningKeys;
  tokens: TokenService;
  verifier: TokenVerifier;
  oauth: OAuthServer;
  principals: PrincipalService;
  groups: GroupService;
  policies: PolicyService;
  resources: ResourceService;
  decisions: DecisionService;
  access: AccessService;
  simulations: SimulationService;
  delegations: DelegationService;
  authzen: AuthZenService;
  webhooks: WebhookService;
  reports: ReportService;
}

/** The decision engine's moving parts, for the benchmark and tests that look inside. */
export interface Engine {
  index: PolicyIndex;
  sync: IndexSync;
  log: DecisionLog;
  /** Decision threads with their replicas of the index; undefined with DECISION_THREADS=0. */
  threads: DecisionThreads | undefined;
  /** What records the access history here; undefined where this instance records none. */
  recorder: AccessHistoryRecorder | undefined;
}

/** What keeps the stored risk scores current, each part run by the job runner. */
export interface RiskUpkeep {
  dormancy: DormancyRisk;
  ownership: OwnershipRisk;
  delegations: DelegationRisk;
  privileges: PrivilegeRisk;
}

/**
 * The service without its HTTP edge: the database, the change feed, background work and the
 * domain services, started and stopped as one.
 */
export interface Runtime {
  config: Config;
  logger: Logger;
  db: Database;
  metrics: Metrics;
  rateLimiting: RateLimiting;
  feed: ChangeFeed;
  /** Where mutations record their changes (audit events, and what follows them). */
  events: EventSink;
  jobs: JobRunner;
  /** Paces the background work this process does (src/pacing). */
  pacer: Pacer;
  services: Services;
  engine: Engine;
  risk: RiskUpkeep;
  /** Which principal-search shapes run a statement of their own. */
  searchPlans: SearchPlans;
  /** Names this instance in job leases and change messages. */
  instanceId: string;
  /** What writes answer and later requests send back to be served at least as fresh. */
  consistency: ConsistencyTokens;
  /** Set once shutdown begins: readiness fails so load balancers stop sending traffic. */
  draining: boolean;
  /**
   * Stops background work (running jobs get `drainMs` to finish, then are released to other
   * instances), then the change feed, the rate limiter's store and the database driver.
   */
  close(drainMs?: number): Promise<void>;
}

export interface RuntimeOptions {
  config: Config;
  logger: Logger;
  neo4j: { uri: string; user: string; password: string };
  /** How long to wait at boot for a database that is still starting. */
  connectTimeoutMs?: number;
  /**
   * Whether this process leads its host's serving processes (src/cluster): the one that follows
   * risk through the change feed and writes the index snapshot, work the others would only repeat.
   * A process serving alone leads (the default).
   */
  leads?: boolean;
  /**
   * Whether this process does the background work: queued jobs (syncs, reports), lease tasks and
   * webhook deliveries (the default). A serving process of a host with a background process does
   * not; `jobQueued` is then told when it queues a job due now.
   */
  background?: boolean;
  jobQueued?: () => void;
  /**
   * Where the pacer of background work hears how held up the serving processes are: this
   * process's own event loop (the default, for a process that serves too), or `reported` by the
   * serving processes through `Runtime.pacer` (a background process, src/cluster).
   */
  loopDelays?: 'this-process' | 'reported';
  /**
   * The other processes of this host (src/cluster), which hear the changes this one commits at
   * once, and it theirs, where no Redis carries them (`REDIS_URL`).
   */
  siblings?: ChangeRelay;
}

async function waitForDatabase(db: Database, timeoutMs: number, logger: Logger): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let announced = false;
  for (;;) {
    try {
      await db.ping();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      if (!announced) {
        logger.info('waiting for the database to accept connections');
        announced = true;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

async function openDatabase(options: RuntimeOptions, metrics: Metrics): Promise<Database> {
  const { config, logger } = options;
  const catalogue = await Catalogue.load();
  const driver = createDriver(options.neo4j.uri, options.neo4j.user, options.neo4j.password, config.neo4j);
  const db = new Database(driver, catalogue, {
    database: config.neo4j.database,
    maxPoolSize: config.neo4j.maxPoolSize,
    logger,
    metrics,
    txTimeoutMs: config.neo4j.txTimeoutMs,
    backgroundTxTimeoutMs: config.neo4j.backgroundTxTimeoutMs,
    connection: {
      uri: options.neo4j.uri,
      user: options.neo4j.user,
      password: options.neo4j.password,
      driver: { connectionTimeoutMs: config.neo4j.connectionTimeoutMs, txRetryMs: config.neo4j.txRetryMs },
    },
  });
  try {
    await waitForDatabase(db, options.connectTimeoutMs ?? 60_000, logger);
    const applied = await migrate(db, await loadMigrations());
    if (applied.length > 0) logger.info({ migrations: applied }, 'schema migrations applied');
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

/** What every wiring step builds on: the storage, the change feed and the job runner. */
interface Base {
  config: Config;
  logger: Logger;
  db: Database;
  feed: ChangeFeed;
  events: EventSink;
  jobs: JobRunner;
  instanceId: string;
  /** The key that encrypts signing keys and webhook secrets at rest. */
  kek: Buffer;
  /** Whether this process leads its host's serving processes (`RuntimeOptions.leads`). */
  leads: boolean;
  metrics: Metrics;
  /** Paces syncs, reports and the privilege-risk refresh: they give way to decisions. */
  pacer: Pacer;
}

/** Signing keys, the revocation view, tokens, clients and the OAuth server. */
async function wireAuth(base: Base, rateLimiting: RateLimiting) {
  const { config, logger, db, events, feed, kek } = base;
  const settings = config.tokens;
  const keys = new SigningKeys(db, {
    alg: settings.signingAlg,
    rotationDays: settings.keyRotationDays,
    retainRetiredS: settings.accessTtlS + 300,
    kek,
    logger,
  });
  await keys.refresh();
  const revocations = new Revocations(db, settings.accessTtlS * 1000, CLOCK_TOLERANCE_S * 1000);
  await revocations.load();
  feed.subscribe(revocations.onChange);
  const verifier = new TokenVerifier(keys, revocations, {
    issuer: settings.issuer,
    audience: settings.audience,
    cacheSize: settings.cacheSize,
  });
  const tokens = new TokenService(db, events, keys, settings, logger);
  const clients = new ClientService(db, events, config.clients, rateLimiting.authFailures, logger);
  await clients.bootstrap();
  const oauth = new OAuthServer(clients, tokens, settings.issuer);
  return { keys, revocations, verifier, tokens, clients, oauth };
}

/** The principals service with its search statement prepared. */
async function wirePrincipals(base: Base) {
  const { config, logger, db, events } = base;
  const searchPlans = new SearchPlans(db, {
    perMinute: config.search.plansPerMinute,
    capacity: config.search.plannedShapes,
    logger,
  });
  const principalWrites = new PrincipalWrites(assessRisk, events);
  const principals = new PrincipalService(db, events, searchPlans, principalWrites);
  const planning = Date.now();
  await principals.prepareSearch();
  logger.info({ ms: Date.now() - planning }, 'search statement ready');
  return { searchPlans, principals, principalWrites };
}

/** Whether this instance computes the access history (the leading process of its host, unless off). */
const recordsAccessHistory = (base: Base): boolean => base.leads && base.config.accessHistory.recording;

/** The decision index, loaded and following the change feed, and what answers from it. */
async function wireEngine(base: Base) {
  const { config, logger, db, feed } = base;
  const index = new PolicyIndex();
  // Loading the index reads whole labels at once, which may outlast a request's timeout.
  const sync = new IndexSync(db.background(), index, logger, { followsPrivileges: base.leads });
  // The access history watches the index from its start: a start from a snapshot computes again
  // what the changes since moved (src/access-history/recorder.ts).
  const recorder = recordsAccessHistory(base)
    ? new AccessHistoryRecorder(db.background(), {
        logger,
        instanceId: base.instanceId,
        leaseMs: config.jobs.leaseMs,
        maxPending: config.accessHistory.maxPending,
        pacer: base.pacer,
      })
    : undefined;
  if (recorder) sync.observe(recorder);
  feed.subscribe(sync.onChange);
  const building = Date.now();
  const { snapshotFile } = config.index;
  const started = await sync.start(snapshotFile ? { file: snapshotFile, feed } : undefined);
  logger.info(
    { ms: Date.now() - building, ...started, offHeapMb: Math.round(index.offHeapBytes / 2 ** 20) },
    started.from === 'snapshot' ? 'decision index read from its snapshot' : 'decision index built',
  );
  const log = new DecisionLog(db, {
    logger,
    retentionDays: config.decisions.retentionDays,
    maxPending: config.decisions.maxPending,
    enabled: config.decisions.recording,
    writer: ThreadRecordWriter.for(db),
  });
  if (!config.decisions.recording) {
    logger.warn('DECISION_RECORDING=off-for-benchmark: decisions are not recorded (benchmarks only)');
  }
  // Where this instance records the access history, its first decision thread computes it.
  const threads =
    config.decisions.threads > 0
      ? new DecisionThreads(
          config.decisions.threads,
          logger,
          recordsAccessHistory(base) ? ACCESS_HISTORY_THREAD : undefined,
        )
      : undefined;
  if (threads && recorder) {
    threads.watch((parts, last) => recorder.take(parts as ReadyPart[], last));
    recorder.computeOn(threads);
  }
  if (threads) await sync.replicate(threads);
  const decisions = new DecisionService(index, log, threads);
  const access = new AccessService(db, index);
  return { index, sync, log, threads, decisions, access, recorder };
}

/** Identity connectors and the SCIM service provider they call, snapshot syncs included. */
function wireConnectors(base: Base, searchPlans: SearchPlans, principalWrites: PrincipalWrites) {
  const { config, db, events, feed, jobs } = base;
  const { scimBaseUrl } = config.connectors;
  const connectors = new ConnectorService(db, events, scimBaseUrl);
  feed.subscribe(connectors.onChange);
  const groupWrites = new GroupWrites(events);
  const scimGroups = new ScimGroupService(db, scimBaseUrl, groupWrites);
  const scimUsers = new ScimUserService(db, searchPlans, scimBaseUrl, principalWrites);
  const connectorSync = new ConnectorSyncService(
    db,
    jobs,
    new ScimSync(db.background(), events, scimGroups, principalWrites, groupWrites, base.pacer),
    connectorSyncStore,
    base.metrics,
  );
  connectorSync.register();
  return { connectors, scimGroups, scimUsers, connectorSync };
}

/** The webhook registry, its delivery transport and the outbox dispatcher. */
function wireWebhooks(base: Base, history: Pick<AccessHistoryService, 'messages'>) {
  const { config, logger, db, events, instanceId, kek } = base;
  const settings = config.webhooks;
  const transport = new WebhookTransport({
    allowInsecure: settings.allowInsecureUrls,
    timeoutMs: settings.timeoutMs,
  });
  const dispatcher = new WebhookDispatcher(db, events, transport, {
    instanceId,
    kek,
    retryScheduleS: settings.retryScheduleS,
    disableAfterMs: settings.disableAfterMs,
    concurrency: settings.concurrency,
    leaseMs: config.jobs.leaseMs,
    sendTimeoutMs: settings.timeoutMs,
    pollMs: settings.pollIntervalMs,
    logRetentionDays: settings.logRetentionDays,
    logger,
    metrics: base.metrics,
    messages: (ids) => history.messages(ids),
  });
  const webhooks = new WebhookService(db, events, transport, {
    kek,
    addresses: { allowInsecure: settings.allowInsecureUrls },
  });
  return { transport, dispatcher, webhooks };
}

/** Report jobs and the service that queues and serves them. */
function wireReports(base: Base, engine: { access: AccessService; index: PolicyIndex }) {
  const { config, logger, db, events, jobs } = base;
  const generator = new ReportGenerator(db.background(), events, engine.access, engine.index, {
    retentionDays: config.reports.retentionDays,
    logger,
    pacer: base.pacer,
  });
  jobs.handle(REPORT_JOB, generator.run);
  const reports = new ReportService(db, jobs, {
    retentionDays: config.reports.retentionDays,
    publicBaseUrl: config.publicBaseUrl,
  });
  return { reports };
}

/**
 * The access history: the leading process of each host computes the access each batch of changes
 * moves, and the one holding the recorder's lease stores it (src/access-history/recorder.ts).
 */
function wireAccessHistory(
  base: Base,
  engine: { index: PolicyIndex; access: AccessService; recorder: AccessHistoryRecorder | undefined },
) {
  const { config, db } = base;
  const { recorder } = engine;
  const service = new AccessHistoryService(db, {
    retentionDays: config.accessHistory.retentionDays,
    ...(recorder ? { settled: () => recorder.settle() } : {}),
  });
  const asOf = new AccessAsOf(db, engine.index, engine.access, {
    retained: () => service.horizon(),
    settled: recorder ? () => recorder.settle() : undefined,
  });
  return { recorder, service, asOf };
}

/**
 * What keeps stored risk current: dormancy with time; ownership, delegations and privileges with
 * changes.
 */
function wireRisk(base: Base, engine: { index: PolicyIndex; sync: IndexSync }): RiskUpkeep {
  const { logger, db, feed } = base;
  const ownership = new OwnershipRisk(db, logger, principalRiskStore);
  const delegations = new DelegationRisk(db, logger, principalRiskStore);
  // Only the leading process follows them (and runs them: see `schedule`).
  if (base.leads) {
    feed.subscribe(ownership.onChange);
    feed.subscribe(delegations.onChange);
  }
  return {
    dormancy: new DormancyRisk(db, principalRiskStore),
    ownership,
    delegations,
    privileges: new PrivilegeRisk(db, engine.index, engine.sync, logger, principalRiskStore, base.pacer),
  };
}

/** Every feature's periodic tasks, registered with the job runner: each feature says its own. */
function schedule(
  base: Base,
  parts: {
    auth: Awaited<ReturnType<typeof wireAuth>>;
    engine: Awaited<ReturnType<typeof wireEngine>>;
    webhooks: ReturnType<typeof wireWebhooks>;
    reports: ReportService;
    risk: RiskUpkeep;
    delegations: DelegationService;
    policies: PolicyService;
    history: ReturnType<typeof wireAccessHistory>;
  },
): void {
  const { config, feed, jobs } = base;
  const { auth, engine, webhooks, reports, risk, delegations, policies, history } = parts;
  const { intervals } = config.jobs;
  const { snapshotFile, snapshotIntervalMs } = config.index;
  const tasks = [
    ...feedTasks(feed, { pollMs: config.events.pollIntervalMs }),
    ...authTasks(auth, {
      keyCheckMs: config.tokens.keyCheckIntervalMs,
      purgeMs: config.tokens.purgeIntervalMs,
    }),
    ...decisionTasks(
      {
        log: engine.log,
        sync: engine.sync,
        // Work a host's other serving processes would only repeat: the leading one does it.
        snapshot:
          snapshotFile && base.leads ? () => writeIndexSnapshot(base, engine.sync, snapshotFile) : undefined,
      },
      {
        flushMs: config.decisions.flushIntervalMs,
        snapshotMs: snapshotIntervalMs,
        indexRetryMs: intervals.indexRetryMs,
        purgeMs: intervals.purgeMs,
      },
    ),
    ...webhookTasks(webhooks.dispatcher, {
      pollMs: config.webhooks.pollIntervalMs,
      purgeMs: intervals.purgeMs,
    }),
    ...reportTasks(reports, { purgeMs: intervals.purgeMs }),
    ...accessHistoryTasks(
      { recorder: history.recorder, history: history.service },
      { renewMs: Math.max(50, Math.floor(config.jobs.leaseMs / 3)), purgeMs: intervals.purgeMs },
    ),
    ...delegationTasks(delegations, { expiryMs: config.delegations.expiryIntervalMs }),
    ...policyTasks(policies, { expiryMs: config.policies.expiryIntervalMs }),
    ...riskTasks(
      risk,
      {
        dormancyMs: config.risk.refreshIntervalMs,
        ownershipMs: intervals.ownershipMs,
        delegationsMs: intervals.delegationRiskMs,
        privilegesMs: config.risk.privilegeIntervalMs,
      },
      base.leads,
    ),
  ];
  for (const task of tasks) jobs.every(task);
}

/** Writes the decision index's snapshot, logging its size and how long it took. */
async function writeIndexSnapshot(base: Base, sync: IndexSync, file: string): Promise<void> {
  const started = Date.now();
  const bytes = await sync.writeSnapshot(file, base.feed);
  if (bytes === undefined)
    base.logger.warn('decision index snapshot skipped: a batch of changes waits for its retry');
  else
    base.logger.info(
      { file, mb: Math.round(bytes / 2 ** 20), ms: Date.now() - started },
      'decision index snapshot written',
    );
}

/** A last snapshot as the service stops, so that the next start reads it: a few seconds at most. */
async function snapshotAtStop(base: Base, sync: IndexSync): Promise<void> {
  const file = base.config.index.snapshotFile;
  if (!file || !base.leads) return;
  await within(
    writeIndexSnapshot(base, sync, file).catch((err: unknown) => {
      base.logger.warn({ err }, 'could not write the decision index snapshot at stop');
    }),
    SNAPSHOT_AT_STOP_MS,
    () =>
      base.logger.warn(
        'the decision index snapshot at stop took too long; the next start may build the index',
      ),
  );
}

const SNAPSHOT_AT_STOP_MS = 5_000;

/**
 * Wires the service together on a database and starts its background work. `main.ts` adds the
 * HTTP server and signals; tests and the benchmark use this directly.
 */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { config, logger } = options;
  // Said once per host, by its leading process: the default suits a developer's machine only.
  if (config.production && !config.publicBaseUrlConfigured && (options.leads ?? true)) {
    logger.warn(
      { public_base_url: config.publicBaseUrl },
      `NODE_ENV=production and PUBLIC_BASE_URL is unset: access tokens (their issuer and audience), SCIM ` +
        `resource locations and the OpenAPI document name ${config.publicBaseUrl}; set PUBLIC_BASE_URL to ` +
        'the address clients reach the service at',
    );
  }
  const instanceId = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const metrics = createMetrics();
  const db = await openDatabase(options, metrics);
  const rateLimiting = createRateLimiting(config, logger);
  const feed = new ChangeFeed(db, {
    logger,
    instanceId,
    redisUrl: config.redisUrl,
    channel: config.events.channel,
    ...(options.siblings && !config.redisUrl ? { relay: options.siblings } : {}),
  });
  const pacer = new Pacer({
    ...config.pacing,
    observe: {
      duty: (duty) => metrics.pacingDuty.set(duty),
      paused: (ms, work) => metrics.pacedSeconds.inc({ work }, ms / 1000),
    },
  });
  metrics.pacingDuty.set(pacer.duty);
  // A process doing background work beside its own requests watches its own loop; a background
  // process hears from the serving processes instead.
  const ownLoop =
    config.pacing.enabled && (options.background ?? true) && options.loopDelays !== 'reported'
      ? new LoopDelay(
          (delayMs) => pacer.report('this-process', delayMs),
          () => metrics.http.started,
        )
      : undefined;
  pacer.start();
  ownLoop?.start();
  const closeAll = async (): Promise<void> => {
    ownLoop?.stop();
    pacer.stop();
    await feed.close();
    await rateLimiting.close();
    await db.close();
  };
  try {
    // The feed starts from the current end of the change sequence before any state that follows
    // it is loaded, so that no change can fall between the two.
    await feed.open();
    const events = new EventSink(feed);
    await events.prepare(db);
    const kek = await resolveKeyEncryptionKey(
      config.tokens.keyEncryptionKey,
      config.localNeo4j.dataDir,
      logger,
    );
    const jobs = new JobRunner(db, {
      instanceId,
      pollMs: config.jobs.pollIntervalMs,
      leaseMs: config.jobs.leaseMs,
      logger,
      runs: metrics.backgroundRuns,
      background: options.background ?? true,
      ...(options.jobQueued ? { queued: options.jobQueued } : {}),
    });
    const base: Base = {
      config,
      logger,
      db,
      feed,
      events,
      jobs,
      instanceId,
      kek,
      leads: options.leads ?? true,
      metrics,
      pacer,
    };

    const auth = await wireAuth(base, rateLimiting);
    const { searchPlans, principals, principalWrites } = await wirePrincipals(base);
    const engine = await wireEngine(base);
    const scim = wireConnectors(base, searchPlans, principalWrites);
    const history = wireAccessHistory(base, engine);
    const webhooks = wireWebhooks(base, history.service);
    const { reports } = wireReports(base, engine);
    const risk = wireRisk(base, engine);
    const policies = new PolicyService(db, events);
    const simulations = new SimulationService(policies, engine.index, engine.threads);
    const delegations = new DelegationService(db, events, engine.index, config.delegations);
    const services: Services = {
      audit: new AuditRepository(db),
      accessHistory: history.service,
      asOf: history.asOf,
      clients: auth.clients,
      connectors: scim.connectors,
      scimUsers: scim.scimUsers,
      scimGroups: scim.scimGroups,
      connectorSync: scim.connectorSync,
      keys: auth.keys,
      tokens: auth.tokens,
      verifier: auth.verifier,
      oauth: auth.oauth,
      principals,
      groups: new GroupService(db, events),
      policies,
      resources: new ResourceService(db, events, principalLookup),
      decisions: engine.decisions,
      access: engine.access,
      simulations,
      delegations,
      authzen: new AuthZenService(
        {
          index: engine.index,
          decisions: engine.decisions,
          access: engine.access,
          connectors: scim.connectors,
        },
        config.publicBaseUrl,
      ),
      webhooks: webhooks.webhooks,
      reports,
    };
    observeEngine(metrics, {
      indexVersion: () => engine.index.version,
      indexLagSeconds: () => engine.sync.lagMs / 1000,
      principals: () => engine.index.principals.size,
      activePolicies: () => engine.index.activePolicyCount,
      pendingRecords: () => engine.log.pending,
      threadTasks: () => engine.threads?.tasks ?? 0,
      threadsReady: () => engine.threads?.ready ?? 0,
    });
    const { recorder } = history;
    if (recorder) {
      observeAccessHistory(metrics, { batches: () => recorder.batches, pending: () => recorder.pending });
    }
    schedule(base, { auth, engine, webhooks, reports, risk, delegations, policies, history });
    jobs.start();

    let closing: Promise<void> | undefined;
    const runtime: Runtime = {
      config,
      logger,
      db,
      metrics,
      rateLimiting,
      feed,
      events,
      jobs,
      pacer,
      services,
      engine: {
        index: engine.index,
        sync: engine.sync,
        log: engine.log,
        threads: engine.threads,
        recorder: engine.recorder,
      },
      risk,
      searchPlans,
      instanceId,
      consistency: new ConsistencyTokens(db, feed, { kek, waitMs: config.events.consistencyWaitMs }),
      draining: false,
      close: (drainMs = config.shutdownTimeoutMs) => {
        runtime.draining = true;
        // Decisions answered before the stop are recorded before the database goes.
        closing ??= jobs
          .stop(drainMs)
          // Lists still deciding on threads are answered, and their records queued, first.
          .then(() => engine.threads?.close())
          .then(() => engine.log.close())
          .then(() => history.recorder?.stop())
          .then(() => snapshotAtStop(base, engine.sync))
          .then(() => webhooks.transport.close())
          .then(closeAll);
        return closing;
      },
    };
    return runtime;
  } catch (err) {
    await closeAll();
    throw err;
  }
}
