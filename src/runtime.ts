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
import { ConnectorService } from './connectors/service.js';
import { ConnectorSyncService } from './scim/sync-service.js';
import { Catalogue } from './db/catalogue.js';
import { Database, createDriver } from './db/database.js';
import { loadMigrations, migrate } from './db/migrations.js';
import { AccessService } from './decisions/access-service.js';
import { PrivilegeRisk } from './risk/privileges.js';
import { PolicyIndex } from './decisions/policy-index.js';
import { DecisionLog } from './decisions/records.js';
import { DecisionService } from './decisions/service.js';
import { SimulationService } from './decisions/simulation.js';
import { IndexSync } from './decisions/sync.js';
import { ChangeFeed } from './events/feed.js';
import { EventSink } from './events/sink.js';
import { GroupService } from './groups/service.js';
import { JobRunner } from './jobs/runner.js';
import type { Logger } from './logging/logger.js';
import { createMetrics, observeEngine, type Metrics } from './metrics.js';
import { OwnershipRisk } from './risk/ownership.js';
import { SearchPlans } from './principals/search/plans.js';
import { PolicyService } from './policies/service.js';
import { PrincipalService } from './principals/service.js';
import { createRateLimiting, type RateLimiting } from './ratelimit/index.js';
import { ReportGenerator, REPORT_JOB } from './reports/generator.js';
import { ReportService } from './reports/service.js';
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
  authzen: AuthZenService;
  webhooks: WebhookService;
  reports: ReportService;
}

/** The decision engine's moving parts, for the benchmark and tests that look inside. */
export interface Engine {
  index: PolicyIndex;
  sync: IndexSync;
  log: DecisionLog;
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
  services: Services;
  engine: Engine;
  /** Names this instance in job leases and change messages. */
  instanceId: string;
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

/**
 * Wires the service together on a database and starts its background work. `main.ts` adds the
 * HTTP server and signals; tests and the benchmark use this directly.
 */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { config, logger } = options;
  const instanceId = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const metrics = createMetrics();
  const db = await openDatabase(options, metrics);
  const rateLimiting = createRateLimiting(config, logger);
  const feed = new ChangeFeed(db, {
    logger,
    instanceId,
    redisUrl: config.redisUrl,
    channel: config.events.channel,
  });
  const closeAll = async (): Promise<void> => {
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
    const { tokens: tokenSettings } = config;
    const kek = await resolveKeyEncryptionKey(
      tokenSettings.keyEncryptionKey,
      config.localNeo4j.dataDir,
      logger,
    );
    const keys = new SigningKeys(db, {
      alg: tokenSettings.signingAlg,
      rotationDays: tokenSettings.keyRotationDays,
      retainRetiredS: tokenSettings.accessTtlS + 300,
      kek,
      logger,
    });
    await keys.refresh();
    const revocations = new Revocations(db, tokenSettings.accessTtlS * 1000, CLOCK_TOLERANCE_S * 1000);
    await revocations.load();
    feed.subscribe(revocations.onChange);
    const verifier = new TokenVerifier(keys, revocations, {
      issuer: tokenSettings.issuer,
      audience: tokenSettings.audience,
      cacheSize: tokenSettings.cacheSize,
    });
    const tokens = new TokenService(db, events, keys, tokenSettings, logger);
    const clients = new ClientService(db, events, config.clients, rateLimiting.authFailures, logger);
    await clients.bootstrap();
    const searchPlans = new SearchPlans(db, {
      perMinute: config.search.plansPerMinute,
      capacity: 500,
      logger,
    });
    const principals = new PrincipalService(db, events, searchPlans);
    const planning = Date.now();
    await principals.prepareSearch();
    logger.info({ ms: Date.now() - planning }, 'search statement ready');
    const index = new PolicyIndex();
    // Loading the index reads whole labels at once, which may outlast a request's timeout.
    const sync = new IndexSync(db.background(), index, logger);
    feed.subscribe(sync.onChange);
    const building = Date.now();
    const built = await sync.load();
    logger.info({ ms: Date.now() - building, ...built }, 'decision index built');
    const decisionLog = new DecisionLog(db, {
      logger,
      retentionDays: config.decisions.retentionDays,
      maxPending: config.decisions.maxPending,
      enabled: config.decisions.recording,
    });
    if (!config.decisions.recording) {
      logger.warn('DECISION_RECORDING=off-for-benchmark: decisions are not recorded (benchmarks only)');
    }
    const decisions = new DecisionService(index, decisionLog);
    const access = new AccessService(db, index);
    const connectors = new ConnectorService(db, events, `${config.publicBaseUrl}/scim/v2`);
    feed.subscribe(connectors.onChange);
    const scimGroups = new ScimGroupService(db, events, `${config.publicBaseUrl}/scim/v2`);
    const jobs = new JobRunner(db, {
      instanceId,
      pollMs: config.jobs.pollIntervalMs,
      leaseMs: config.jobs.leaseMs,
      logger,
    });
    const connectorSync = new ConnectorSyncService(
      db,
      jobs,
      new ScimSync(db.background(), events, scimGroups),
    );
    connectorSync.register();
    const reportGenerator = new ReportGenerator(db.background(), events, access, {
      retentionDays: config.reports.retentionDays,
      logger,
    });
    jobs.handle(REPORT_JOB, reportGenerator.run);
    const webhookSettings = config.webhooks;
    const transport = new WebhookTransport({
      allowInsecure: webhookSettings.allowInsecureUrls,
      timeoutMs: webhookSettings.timeoutMs,
    });
    const dispatcher = new WebhookDispatcher(db, events, transport, {
      instanceId,
      kek,
      retryScheduleS: webhookSettings.retryScheduleS,
      disableAfterMs: webhookSettings.disableAfterMs,
      concurrency: webhookSettings.concurrency,
      leaseMs: config.jobs.leaseMs,
      sendTimeoutMs: webhookSettings.timeoutMs,
      pollMs: webhookSettings.pollIntervalMs,
      logRetentionDays: webhookSettings.logRetentionDays,
      logger,
    });
    const services: Services = {
      audit: new AuditRepository(db),
      clients,
      connectors,
      scimUsers: new ScimUserService(db, events, searchPlans, `${config.publicBaseUrl}/scim/v2`),
      scimGroups,
      keys,
      tokens,
      verifier,
      oauth: new OAuthServer(clients, tokens, tokenSettings.issuer),
      principals,
      groups: new GroupService(db, events),
      policies: new PolicyService(db, events),
      resources: new ResourceService(db, events),
      decisions,
      access,
      simulations: new SimulationService(db, index),
      authzen: new AuthZenService({ index, decisions, access, connectors }, config.publicBaseUrl),
      connectorSync,
      webhooks: new WebhookService(db, events, transport, {
        kek,
        addresses: { allowInsecure: webhookSettings.allowInsecureUrls },
      }),
      reports: new ReportService(db, jobs, {
        retentionDays: config.reports.retentionDays,
        publicBaseUrl: config.publicBaseUrl,
      }),
    };

    jobs.every({
      name: 'events.poll',
      scope: 'instance',
      everyMs: config.events.pollIntervalMs,
      run: () => feed.poll(),
    });
    jobs.every({
      name: 'tokens.keys',
      scope: 'instance',
      everyMs: tokenSettings.keyCheckIntervalMs,
      run: async () => {
        await keys.refresh();
        revocations.prune();
        verifier.prune();
      },
    });
    jobs.every({
      name: 'tokens.purge',
      scope: 'cluster',
      everyMs: tokenSettings.purgeIntervalMs,
      run: async () => {
        await tokens.purge();
      },
    });
    jobs.every({
      name: 'principals.risk',
      scope: 'cluster',
      everyMs: config.risk.refreshIntervalMs,
      run: async () => {
        await principals.refreshTimeBasedRisk();
      },
    });
    jobs.every({
      name: 'decisions.flush',
      scope: 'instance',
      everyMs: config.decisions.flushIntervalMs,
      run: () => decisionLog.flush(),
    });
    jobs.every({
      name: 'decisions.index_retry',
      scope: 'instance',
      everyMs: 1_000,
      run: () => sync.retry(),
    });
    jobs.every({
      name: 'decisions.purge',
      scope: 'cluster',
      everyMs: 3_600_000,
      run: async () => {
        await decisionLog.purge();
      },
    });
    jobs.every({
      name: 'webhooks.dispatch',
      scope: 'instance',
      everyMs: webhookSettings.pollIntervalMs,
      run: (signal) => dispatcher.run(signal),
    });
    jobs.every({
      name: 'reports.purge',
      scope: 'cluster',
      everyMs: 3_600_000,
      run: () => services.reports.purge(),
    });
    jobs.every({
      name: 'webhooks.purge',
      scope: 'cluster',
      everyMs: 3_600_000,
      run: () => dispatcher.purge(),
    });
    const ownership = new OwnershipRisk(db, logger);
    feed.subscribe(ownership.onChange);
    jobs.every({
      name: 'risk.ownership',
      scope: 'instance',
      everyMs: 1_000,
      run: async () => {
        await ownership.refresh();
      },
    });
    const privileges = new PrivilegeRisk(db, index, sync, logger);
    observeEngine(metrics, {
      indexVersion: () => index.version,
      principals: () => index.principals.size,
      activePolicies: () => index.activePolicyCount,
      pendingRecords: () => decisionLog.pending,
    });
    jobs.every({
      name: 'risk.privileges',
      scope: 'instance',
      everyMs: config.risk.privilegeIntervalMs,
      run: async () => {
        await privileges.refresh();
      },
    });
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
      services,
      engine: { index, sync, log: decisionLog, privileges },
      instanceId,
      draining: false,
      close: (drainMs = config.shutdownTimeoutMs) => {
        runtime.draining = true;
        // Decisions answered before the stop are recorded before the database goes.
        closing ??= jobs
          .stop(drainMs)
          .then(() => decisionLog.flush())
          .then(() => transport.close())
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
