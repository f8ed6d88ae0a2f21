import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import { idPattern } from '../ids.js';

/**
 * Every setting the service reads from its environment, in one schema. docs/configuration.md's
 * table is the same list; `test/unit/config.test.ts` keeps the two in step.
 */
const Port = Type.Integer({ minimum: 1, maximum: 65535 });
/** A port to listen on, where 0 takes any free one (the start-up log says which). */
const ListenPort = Type.Integer({ minimum: 0, maximum: 65535 });
const PositiveInt = Type.Integer({ minimum: 1 });
const Bool = Type.Boolean();
const MemorySize = Type.String({ pattern: '^[0-9]+[kKmMgG]$' });

/**
 * The nice value of the Neo4j the service starts where none is configured: on a host whose cores
 * are all busy, the serving processes (and the load they answer) get them before the database's
 * writes do (docs/operations.md, "Background work gives way to requests").
 */
export const LOCAL_NEO4J_NICENESS = 10;

export const ConfigSchema = Type.Object({
  PORT: Type.Optional(Port),
  HOST: Type.Optional(Type.String({ minLength: 1 })),
  PUBLIC_BASE_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s/]+(/[^\\s]*)?$' })),
  NODE_ENV: Type.Optional(Type.String({ minLength: 1 })),
  LOG_LEVEL: Type.Optional(
    Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
  ),
  TRUST_PROXY: Type.Optional(
    Type.String({
      pattern: '^(?:true|false|[0-9]|[1-9][0-9])$',
      description: 'a number of proxy hops from 0 to 99, or true (1) or false (0)',
    }),
  ),
  SHUTDOWN_TIMEOUT_MS: Type.Optional(PositiveInt),
  WORKERS: Type.Optional(Type.Integer({ minimum: 1, maximum: 256 })),
  BACKGROUND_PROCESS: Type.Optional(
    Type.Union([Type.Literal('auto'), Type.Literal('on'), Type.Literal('off')]),
  ),
  BACKGROUND_PACING: Type.Optional(Type.Union([Type.Literal('on'), Type.Literal('off')])),
  BACKGROUND_PACING_DELAY_MS: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000 })),
  METRICS_PORT: Type.Optional(ListenPort),
  METRICS_TOKEN: Type.Optional(
    Type.String({ pattern: '^[!-~]{16,256}$', description: '16 to 256 printable characters, no spaces' }),
  ),

  NEO4J_URI: Type.Optional(Type.String({ pattern: '^(bolt|neo4j)(\\+s|\\+ssc)?://.+' })),
  NEO4J_USER: Type.Optional(Type.String({ minLength: 1 })),
  NEO4J_PASSWORD: Type.Optional(Type.String()),
  NEO4J_DATABASE: Type.Optional(Type.String({ pattern: '^[A-Za-z][A-Za-z0-9.-]{0,62}$' })),
  NEO4J_MAX_POOL_SIZE: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  NEO4J_CONNECTION_TIMEOUT_MS: Type.Optional(PositiveInt),
  NEO4J_TX_RETRY_MS: Type.Optional(Type.Integer({ minimum: 0 })),
  NEO4J_TX_TIMEOUT_MS: Type.Optional(PositiveInt),
  NEO4J_BACKGROUND_TX_TIMEOUT_MS: Type.Optional(PositiveInt),
  NEO4J_DATA_DIR: Type.Optional(Type.String({ minLength: 1 })),
  NEO4J_LOCAL_PORT: Type.Optional(ListenPort),
  NEO4J_LOCAL_HTTP_PORT: Type.Optional(ListenPort),
  NEO4J_LOCAL_HEAP: Type.Optional(MemorySize),
  NEO4J_LOCAL_PAGECACHE: Type.Optional(MemorySize),
  NEO4J_LOCAL_NICENESS: Type.Optional(Type.Integer({ minimum: 0, maximum: 19 })),
  NEO4J_PROVIDER: Type.Optional(
    Type.Union([Type.Literal('auto'), Type.Literal('docker'), Type.Literal('maven')]),
  ),

  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://.+' })),
  RATE_LIMIT_STANDARD: Type.Optional(PositiveInt),
  RATE_LIMIT_DECISIONS: Type.Optional(PositiveInt),
  RATE_LIMIT_BULK: Type.Optional(PositiveInt),
  RATE_LIMIT_SCIM: Type.Optional(PositiveInt),
  RATE_LIMIT_WINDOW_S: Type.Optional(PositiveInt),
  RATE_LIMIT_KEY_PREFIX: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9:_-]{1,64}$' })),
  AUTH_FAILURE_LIMIT: Type.Optional(PositiveInt),
  AUTH_FAILURE_IP_LIMIT: Type.Optional(PositiveInt),
  AUTH_FAILURE_WINDOW_S: Type.Optional(PositiveInt),

  ACCESS_TOKEN_TTL_S: Type.Optional(Type.Integer({ minimum: 30, maximum: 86_400 })),
  REFRESH_TOKEN_TTL_DAYS: Type.Optional(Type.Integer({ minimum: 1, maximum: 365 })),
  TOKEN_AUDIENCE: Type.Optional(Type.String({ minLength: 1 })),
  SIGNING_ALG: Type.Optional(Type.Union([Type.Literal('ES256'), Type.Literal('RS256')])),
  SIGNING_KEY_ROTATION_DAYS: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 })),
  KEY_ENCRYPTION_KEY: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9+/_-]{43}=?$' })),
  CLIENT_SECRET_HASH_COST: Type.Optional(Type.Integer({ minimum: 10, maximum: 20 })),
  BOOTSTRAP_CLIENT_ID: Type.Optional(Type.String({ pattern: idPattern('client') })),
  BOOTSTRAP_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 24, maxLength: 256 })),
  BOOTSTRAP_SECRET_FILE: Type.Optional(Type.String({ minLength: 1 })),
  TOKEN_CACHE_SIZE: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),

  EVENTS_CHANNEL: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9:_.-]{1,128}$' })),
  EVENT_POLL_INTERVAL_MS: Type.Optional(Type.Integer({ minimum: 50, maximum: 60_000 })),
  CONSISTENCY_WAIT_MS: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
  JOB_POLL_INTERVAL_MS: Type.Optional(Type.Integer({ minimum: 50, maximum: 60_000 })),
  JOB_LEASE_S: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_600 })),
  RISK_REFRESH_INTERVAL_S: Type.Optional(PositiveInt),
  SEARCH_PLANS_PER_MINUTE: Type.Optional(Type.Integer({ minimum: 0, maximum: 6_000 })),
  TOKEN_PURGE_INTERVAL_S: Type.Optional(PositiveInt),
  SIGNING_KEY_CHECK_INTERVAL_S: Type.Optional(PositiveInt),
  DECISION_RETENTION_DAYS: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_650 })),
  ACCESS_HISTORY: Type.Optional(Type.Union([Type.Literal('on'), Type.Literal('off')])),
  ACCESS_HISTORY_DAYS: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_650 })),
  ACCESS_HISTORY_MAX_PENDING: Type.Optional(Type.Integer({ minimum: 1_000, maximum: 10_000_000 })),
  DECISION_FLUSH_INTERVAL_MS: Type.Optional(Type.Integer({ minimum: 10, maximum: 1_000 })),
  DECISION_MAX_PENDING: Type.Optional(Type.Integer({ minimum: 1_000, maximum: 10_000_000 })),
  DECISION_RECORDING: Type.Optional(Type.Union([Type.Literal('on'), Type.Literal('off-for-benchmark')])),
  DECISION_THREADS: Type.Optional(Type.Integer({ minimum: 0, maximum: 64 })),
  PRIVILEGE_RISK_INTERVAL_S: Type.Optional(PositiveInt),
  INDEX_SNAPSHOT: Type.Optional(Type.Union([Type.Literal('on'), Type.Literal('off')])),
  INDEX_SNAPSHOT_INTERVAL_S: Type.Optional(Type.Integer({ minimum: 10, maximum: 86_400 })),
  POLICY_EXPIRY_INTERVAL_S: Type.Optional(Type.Integer({ minimum: 1, maximum: 60 })),
  DELEGATION_MAX_DAYS: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_650 })),
  DELEGATION_EXPIRY_INTERVAL_S: Type.Optional(Type.Integer({ minimum: 1, maximum: 60 })),
  SYNC_MAX_BYTES: Type.Optional(Type.Integer({ minimum: 1_024, maximum: 2_147_483_647 })),

  WEBHOOKS_ALLOW_INSECURE_URLS: Type.Optional(Bool),
  WEBHOOK_RETRY_SCHEDULE: Type.Optional(Type.String({ pattern: '^ *[0-9]{1,7}( *, *[0-9]{1,7}){0,19} *$' })),
  WEBHOOK_TIMEOUT_MS: Type.Optional(Type.Integer({ minimum: 100, maximum: 60_000 })),
  WEBHOOK_DISABLE_AFTER_HOURS: Type.Optional(Type.Integer({ minimum: 1, maximum: 8_760 })),
  WEBHOOK_POLL_INTERVAL_MS: Type.Optional(Type.Integer({ minimum: 10, maximum: 60_000 })),
  WEBHOOK_CONCURRENCY: Type.Optional(Type.Integer({ minimum: 1, maximum: 256 })),
  WEBHOOK_LOG_RETENTION_DAYS: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_650 })),
  REPORT_RETENTION_DAYS: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_650 })),

  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://[^\\s]+$' })),
  OTEL_SDK_DISABLED: Type.Optional(Bool),
  OTEL_SERVICE_NAME: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  OTEL_TRACES_SAMPLER_ARG: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
});

export type RawConfig = Static<typeof ConfigSchema>;

/** The validated settings, grouped by concern; their types follow from the schema above. */
export type Config = ReturnType<typeof settings>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

const ajv = new Ajv({ coerceTypes: true, allErrors: true, strict: true });
const check = ajv.compile<RawConfig>(ConfigSchema);

/** Describes one accepted value in words, for the message that names a bad variable. */
function expectation(schema: TSchema): string {
  const s = schema as Record<string, unknown>;
  if (typeof s['description'] === 'string') return s['description'];
  if (Array.isArray(s['anyOf'])) {
    return `one of ${(s['anyOf'] as { const: unknown }[]).map((x) => JSON.stringify(x.const)).join(', ')}`;
  }
  if (s['type'] === 'integer') {
    const min = s['minimum'] as number | undefined;
    const max = s['maximum'] as number | undefined;
    return `an integer${min !== undefined ? ` >= ${min}` : ''}${max !== undefined ? ` and <= ${max}` : ''}`;
  }
  if (s['type'] === 'boolean') return 'true or false';
  if (typeof s['pattern'] === 'string') return `a value matching ${s['pattern']}`;
  return 'a non-empty string';
}

/**
 * Reads and validates the environment. Empty strings count as unset, so `FOO=` in a shell or a
 * compose file falls back to the default rather than failing on an empty value.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(ConfigSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const candidate: Record<string, unknown> = { ...raw };
  if (!check(candidate)) {
    const problems = (check.errors ?? []).map((e) => {
      const name = e.instancePath.replace(/^\//, '');
      const schema = (ConfigSchema.properties as Record<string, TSchema>)[name];
      const shown = JSON.stringify(raw[name] ?? '');
      return `${name}=${shown} is not valid: expected ${schema ? expectation(schema) : (e.message ?? 'a valid value')}`;
    });
    throw new ConfigError([...new Set(problems)]);
  }
  return settings(candidate);
}

/** `true` and `false` were the setting's values before it counted hops: one proxy, and none. */
function proxyHops(value: string | undefined): number {
  if (value === undefined || value === 'false') return 0;
  if (value === 'true') return 1;
  return Number(value);
}

function settings(c: RawConfig) {
  const port = c.PORT ?? 8080;
  const workers = c.WORKERS ?? availableParallelism();
  const publicBaseUrl = (c.PUBLIC_BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, '');
  if (c.METRICS_PORT !== undefined && c.METRICS_PORT !== 0 && c.METRICS_PORT === port) {
    throw new ConfigError([
      `METRICS_PORT=${JSON.stringify(String(c.METRICS_PORT))} is not valid: expected a port other than PORT, whose /metrics it replaces`,
    ]);
  }
  const kek = c.KEY_ENCRYPTION_KEY === undefined ? undefined : Buffer.from(c.KEY_ENCRYPTION_KEY, 'base64');
  if (kek !== undefined && kek.length !== 32) {
    throw new ConfigError([
      'KEY_ENCRYPTION_KEY is not valid: expected 32 bytes in base64 (openssl rand -base64 32)',
    ]);
  }
  return {
    port,
    host: c.HOST ?? '0.0.0.0',
    publicBaseUrl,
    /** Whether PUBLIC_BASE_URL was set: tokens and SCIM locations name the default otherwise. */
    publicBaseUrlConfigured: c.PUBLIC_BASE_URL !== undefined,
    /** NODE_ENV=production: a start warns of development defaults left in place. */
    production: c.NODE_ENV === 'production',
    logLevel: c.LOG_LEVEL ?? 'info',
    /**
     * Proxies in front of the service whose X-Forwarded-For entries are believed: the client
     * address is the entry this many from the right; 0 ignores the header.
     */
    proxyHops: proxyHops(c.TRUST_PROXY),
    shutdownTimeoutMs: c.SHUTDOWN_TIMEOUT_MS ?? 10_000,
    /** Serving processes (src/cluster); 1 serves from this process alone. */
    workers,
    /**
     * Whether a process of its own, serving no request, does the background work (src/cluster):
     * by default wherever there are several serving processes.
     */
    backgroundProcess:
      c.BACKGROUND_PROCESS === 'on' || ((c.BACKGROUND_PROCESS ?? 'auto') === 'auto' && workers > 1),
    /**
     * Background work (syncs, reports, the privilege-risk refresh) slowed down while a serving
     * process's event loop is held up for longer than `delayMs` (src/pacing).
     */
    pacing: {
      enabled: (c.BACKGROUND_PACING ?? 'on') === 'on',
      delayMs: c.BACKGROUND_PACING_DELAY_MS ?? 10,
    },
    metrics: {
      /** A listener of its own for /metrics (0: any free port), which the main port then lacks. */
      port: c.METRICS_PORT,
      /** The bearer token a scrape of /metrics must carry; unset, /metrics is open. */
      token: c.METRICS_TOKEN,
    },
    neo4j: {
      uri: c.NEO4J_URI,
      user: c.NEO4J_USER ?? 'neo4j',
      password: c.NEO4J_PASSWORD ?? '',
      database: c.NEO4J_DATABASE ?? 'neo4j',
      maxPoolSize: c.NEO4J_MAX_POOL_SIZE ?? 50,
      connectionTimeoutMs: c.NEO4J_CONNECTION_TIMEOUT_MS ?? 3_000,
      txRetryMs: c.NEO4J_TX_RETRY_MS ?? 3_000,
      txTimeoutMs: c.NEO4J_TX_TIMEOUT_MS ?? 30_000,
      backgroundTxTimeoutMs: c.NEO4J_BACKGROUND_TX_TIMEOUT_MS ?? 600_000,
    },
    localNeo4j: {
      provider: c.NEO4J_PROVIDER ?? 'auto',
      dataDir: c.NEO4J_DATA_DIR ?? './data',
      port: c.NEO4J_LOCAL_PORT ?? 7687,
      httpPort: c.NEO4J_LOCAL_HTTP_PORT ?? 7474,
      heap: c.NEO4J_LOCAL_HEAP ?? '1g',
      pageCache: c.NEO4J_LOCAL_PAGECACHE ?? '256m',
      niceness: c.NEO4J_LOCAL_NICENESS ?? LOCAL_NEO4J_NICENESS,
    },
    redisUrl: c.REDIS_URL,
    rateLimits: {
      windowS: c.RATE_LIMIT_WINDOW_S ?? 60,
      keyPrefix: c.RATE_LIMIT_KEY_PREFIX ?? 'pas:rl',
      buckets: {
        standard: c.RATE_LIMIT_STANDARD ?? 1000,
        decisions: c.RATE_LIMIT_DECISIONS ?? 10_000,
        bulk: c.RATE_LIMIT_BULK ?? 100,
        scim: c.RATE_LIMIT_SCIM ?? 1800,
      },
      authFailures: {
        perClient: c.AUTH_FAILURE_LIMIT ?? 10,
        perIp: c.AUTH_FAILURE_IP_LIMIT ?? 100,
        windowS: c.AUTH_FAILURE_WINDOW_S ?? 900,
      },
    },
    tokens: {
      issuer: publicBaseUrl,
      audience: c.TOKEN_AUDIENCE ?? `${publicBaseUrl}/v1`,
      accessTtlS: c.ACCESS_TOKEN_TTL_S ?? 900,
      refreshTtlDays: c.REFRESH_TOKEN_TTL_DAYS ?? 30,
      signingAlg: c.SIGNING_ALG ?? 'ES256',
      keyRotationDays: c.SIGNING_KEY_ROTATION_DAYS ?? 30,
      /** 32 bytes; undefined means a per-installation key kept under the data directory. */
      keyEncryptionKey: kek,
      /** Verified access tokens kept in memory, so a repeated token skips the signature check. */
      cacheSize: c.TOKEN_CACHE_SIZE ?? 10_000,
      keyCheckIntervalMs: (c.SIGNING_KEY_CHECK_INTERVAL_S ?? 60) * 1000,
      purgeIntervalMs: (c.TOKEN_PURGE_INTERVAL_S ?? 600) * 1000,
    },
    clients: {
      secretHashCost: c.CLIENT_SECRET_HASH_COST ?? 15,
      bootstrapId: c.BOOTSTRAP_CLIENT_ID,
      bootstrapSecret: c.BOOTSTRAP_CLIENT_SECRET,
      /** Where a generated bootstrap secret is written (mode 0600), never to the log. */
      bootstrapSecretFile:
        c.BOOTSTRAP_SECRET_FILE ?? path.join(c.NEO4J_DATA_DIR ?? './data', 'bootstrap-admin.json'),
    },
    events: {
      /** Redis channel on which instances tell each other about committed changes. */
      channel: c.EVENTS_CHANNEL ?? 'pas:events',
      /** How often each instance asks Neo4j whether changes committed elsewhere. */
      pollIntervalMs: c.EVENT_POLL_INTERVAL_MS ?? 500,
      /** How long a request with a consistency token waits for this instance to catch up. */
      consistencyWaitMs: c.CONSISTENCY_WAIT_MS ?? 2_000,
    },
    jobs: {
      pollIntervalMs: c.JOB_POLL_INTERVAL_MS ?? 1_000,
      leaseMs: (c.JOB_LEASE_S ?? 30) * 1000,
      /** The paces of periodic tasks that have no setting of their own. */
      intervals: {
        /** Removing what is past its retention: decision records, reports, delivery logs. */
        purgeMs: 3_600_000,
        /** Retrying a change the decision index could not read from the database. */
        indexRetryMs: 1_000,
        /** Bringing the ownership factor of the risk score up to date with owners' changes. */
        ownershipMs: 1_000,
        /** Bringing DELEGATION_ORPHANED up to date with delegations and delegators' changes. */
        delegationRiskMs: 1_000,
      },
    },
    risk: {
      refreshIntervalMs: (c.RISK_REFRESH_INTERVAL_S ?? 3_600) * 1000,
      /** How often the privilege factors are brought up to date after policies or memberships change. */
      privilegeIntervalMs: (c.PRIVILEGE_RISK_INTERVAL_S ?? 15) * 1000,
    },
    policies: {
      /**
       * How often the close of time-bound policies' windows is looked for and recorded
       * (`policy.expired`): at most a minute, so that each close is recorded within one.
       */
      expiryIntervalMs: (c.POLICY_EXPIRY_INTERVAL_S ?? 15) * 1000,
    },
    index: {
      /**
       * Where the decision index is written as a snapshot, which a start reads instead of building
       * the index from the database; undefined: snapshots off.
       */
      snapshotFile:
        (c.INDEX_SNAPSHOT ?? 'on') === 'on'
          ? path.join(c.NEO4J_DATA_DIR ?? './data', 'index', 'decision-index.snapshot')
          : undefined,
      /** How often the snapshot is written (and once more at a graceful stop). */
      snapshotIntervalMs: (c.INDEX_SNAPSHOT_INTERVAL_S ?? 600) * 1000,
    },
    accessHistory: {
      /** Off: this instance neither computes nor stores access changes (what is stored stays readable). */
      recording: (c.ACCESS_HISTORY ?? 'on') === 'on',
      /** Access changes are kept this long; `as_of` reaches no further back. */
      retentionDays: c.ACCESS_HISTORY_DAYS ?? 400,
      /** Changes held while the database cannot take them; the oldest causes' are dropped beyond. */
      maxPending: c.ACCESS_HISTORY_MAX_PENDING ?? 1_000_000,
    },
    decisions: {
      retentionDays: c.DECISION_RETENTION_DAYS ?? 30,
      /** Decisions are recorded in batches at this pace: a record trails its answer by at most this. */
      flushIntervalMs: c.DECISION_FLUSH_INTERVAL_MS ?? 500,
      /** Records held while the database cannot take them; the oldest are dropped beyond. */
      maxPending: c.DECISION_MAX_PENDING ?? 200_000,
      /** Off only to measure what recording costs; decisions then go unrecorded. */
      recording: (c.DECISION_RECORDING ?? 'on') === 'on',
      /**
       * Threads deciding batches, AuthZEN evaluation lists and simulations, each over a replica
       * of the index (src/decisions/decision-thread.ts); 0 decides them on the event loop.
       */
      threads: c.DECISION_THREADS ?? 1,
    },
    delegations: {
      /** How far ahead a delegation may expire. */
      maxDays: c.DELEGATION_MAX_DAYS ?? 90,
      /** How often expired delegations are looked for and their expiry recorded (at most a minute). */
      expiryIntervalMs: (c.DELEGATION_EXPIRY_INTERVAL_S ?? 15) * 1000,
    },
    connectors: {
      /** Where the SCIM service provider answers: resource locations and discovery name it. */
      scimBaseUrl: `${publicBaseUrl}/scim/v2`,
      /** The largest snapshot POST /v1/connectors/{id}/sync takes. */
      syncMaxBytes: c.SYNC_MAX_BYTES ?? 256 * 1024 * 1024,
    },
    webhooks: {
      /** Plain http and loopback receivers: for development and tests only. */
      allowInsecureUrls: c.WEBHOOKS_ALLOW_INSECURE_URLS ?? false,
      /** Seconds to wait before each retry; a delivery is given up after the last. */
      retryScheduleS: (c.WEBHOOK_RETRY_SCHEDULE ?? '5,300,1800,7200,18000,36000,36000')
        .split(',')
        .map((s) => Number(s.trim())),
      timeoutMs: c.WEBHOOK_TIMEOUT_MS ?? 10_000,
      /** A webhook that has failed without a success for this long is disabled. */
      disableAfterMs: (c.WEBHOOK_DISABLE_AFTER_HOURS ?? 120) * 3_600_000,
      /** How often each instance looks for deliveries that are due. */
      pollIntervalMs: c.WEBHOOK_POLL_INTERVAL_MS ?? 250,
      /** Webhooks one instance delivers to at the same time (each in event order). */
      concurrency: c.WEBHOOK_CONCURRENCY ?? 8,
      logRetentionDays: c.WEBHOOK_LOG_RETENTION_DAYS ?? 30,
    },
    reports: {
      retentionDays: c.REPORT_RETENTION_DAYS ?? 7,
    },
    /**
     * OpenTelemetry traces (src/tracing): on when an OTLP endpoint is configured, which the
     * exporter itself reads, with the other OTEL_EXPORTER_OTLP_* variables, from the environment.
     */
    tracing: {
      enabled:
        !(c.OTEL_SDK_DISABLED ?? false) &&
        (c.OTEL_EXPORTER_OTLP_ENDPOINT ?? c.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) !== undefined,
      serviceName: c.OTEL_SERVICE_NAME ?? 'principals-access-service',
      /** Share of the traces this service starts that are kept; a caller's sampled trace always is. */
      sampleRatio: c.OTEL_TRACES_SAMPLER_ARG ?? 1,
    },
    search: {
      /** New search shapes given a statement of their own per minute (0: the generic one only). */
      plansPerMinute: c.SEARCH_PLANS_PER_MINUTE ?? 12,
      /** Shapes remembered as planned; kept below Neo4j's own plan cache (1,000 by default). */
      plannedShapes: 500,
    },
  };
}
