import neo4j, {
  Neo4jError,
  isDate,
  isDateTime,
  isDuration,
  isLocalDateTime,
  isNode,
  isRelationship,
  type Driver,
  type ManagedTransaction,
  type Session,
} from 'neo4j-driver';
import { AppError, conflict, unavailable } from '../errors/errors.js';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from '../metrics.js';
import { defineQueries, type Catalogue } from './catalogue.js';
import { DbHealth } from './health.js';

const Q = defineQueries('system', ['ping']);

export type Params = Record<string, unknown>;
export type Row = Record<string, unknown>;

/** A transaction that runs named queries of the catalogue and returns plain JS rows. */
export interface Tx {
  run<T = Row>(name: string, params?: Params): Promise<T[]>;
  first<T = Row>(name: string, params?: Params): Promise<T | undefined>;
  /**
   * Runs a query assembled from a catalogue template and generated predicates. Callers must
   * build `text` only from catalogue text and whitelisted identifiers; every value goes in
   * `params`.
   */
  runComposed<T = Row>(unit: string, text: string, params?: Params): Promise<T[]>;
}

export interface DatabaseOptions {
  database: string;
  maxPoolSize: number;
  logger: Logger;
  metrics: Metrics;
  probeIntervalMs?: number;
}

const CONNECTIVITY_CODES = new Set([
  neo4j.error.SERVICE_UNAVAILABLE,
  neo4j.error.SESSION_EXPIRED,
  'Neo.TransientError.General.DatabaseUnavailable',
  'Neo.ClientError.Database.DatabaseNotFound',
]);

/** Seconds a client should wait before retrying while the database is away. */
const RETRY_AFTER_S = 5;

export function createDriver(
  uri: string,
  user: string,
  password: string,
  opts: { maxPoolSize: number; connectionTimeoutMs: number; txRetryMs: number },
): Driver {
  const auth = password === '' ? undefined : neo4j.auth.basic(user, password);
  return neo4j.driver(uri, auth, {
    maxConnectionPoolSize: opts.maxPoolSize,
    connectionTimeout: opts.connectionTimeoutMs,
    connectionAcquisitionTimeout: opts.connectionTimeoutMs + 2_000,
    maxTransactionRetryTime: opts.txRetryMs,
    disableLosslessIntegers: true,
    telemetryDisabled: true,
    userAgent: 'principals-access-service',
    logging: { level: 'error', logger: () => undefined },
  });
}

/**
 * The one way the service talks to Neo4j: managed read and write units of work over named
 * queries, with Neo4j values turned into plain JS and Neo4j errors into domain errors.
 */
export class Database {
  readonly health: DbHealth;

  constructor(
    readonly driver: Driver,
    readonly catalogue: Catalogue,
    private readonly options: DatabaseOptions,
  ) {
    options.metrics.dbPoolMax.set(options.maxPoolSize);
    this.health = new DbHealth(
      () => this.ping(),
      options.logger,
      (up) => options.metrics.dbUp.set(up ? 1 : 0),
      options.probeIntervalMs,
    );
  }

  read<T>(unit: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.unitOfWork('read', unit, work);
  }

  write<T>(unit: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.unitOfWork('write', unit, work);
  }

  /** A single named read query. */
  query<T = Row>(name: string, params: Params = {}): Promise<T[]> {
    return this.read(name, (tx) => tx.run<T>(name, params));
  }

  /** A cheap round trip that fails fast: the readiness check and the recovery probe. */
  async ping(timeoutMs = 2_000): Promise<void> {
    const session = this.driver.session({ database: this.options.database });
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        session.run(this.catalogue.get(Q.ping)).then(() => undefined),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`ping timed out after ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
      void session.close().catch(() => undefined);
    }
  }

  /** Runs a statement outside a managed transaction (schema commands). */
  async runAutoCommit(text: string, params: Params = {}): Promise<Row[]> {
    const session = this.driver.session({ database: this.options.database });
    try {
      const result = await session.run(text, toNeo4jParams(params));
      return result.records.map((r) => fromNeo4j(r.toObject()) as Row);
    } catch (err) {
      throw this.mapError(err);
    } finally {
      await session.close();
    }
  }

  async close(): Promise<void> {
    this.health.stop();
    await this.driver.close();
  }

  private async unitOfWork<T>(
    mode: 'read' | 'write',
    unit: string,
    work: (tx: Tx) => Promise<T>,
  ): Promise<T> {
    if (!this.health.isUp) {
      throw unavailable('the database is unreachable; retry shortly', RETRY_AFTER_S);
    }
    const { metrics } = this.options;
    const endTimer = metrics.dbDuration.startTimer({ mode, unit });
    let session: Session | undefined;
    metrics.dbSessionsActive.inc();
    try {
      session = this.driver.session({
        database: this.options.database,
        defaultAccessMode: mode === 'read' ? neo4j.session.READ : neo4j.session.WRITE,
      });
      const txConfig = { metadata: { app: 'principals-access-service', unit } };
      const fn = (tx: ManagedTransaction): Promise<T> => work(this.wrap(tx));
      const result =
        mode === 'read' ? await session.executeRead(fn, txConfig) : await session.executeWrite(fn, txConfig);
      metrics.dbTransactions.inc({ mode, unit, outcome: 'ok' });
      return result;
    } catch (err) {
      metrics.dbTransactions.inc({ mode, unit, outcome: err instanceof AppError ? 'rejected' : 'error' });
      throw this.mapError(err);
    } finally {
      metrics.dbSessionsActive.dec();
      endTimer();
      if (session) await session.close().catch(() => undefined);
    }
  }

  private wrap(tx: ManagedTransaction): Tx {
    const exec = async <T>(text: string, params: Params): Promise<T[]> => {
      const result = await tx.run(text, toNeo4jParams(params));
      return result.records.map((r) => fromNeo4j(r.toObject()) as T);
    };
    return {
      run: <T>(name: string, params: Params = {}) => exec<T>(this.catalogue.get(name), params),
      first: async <T>(name: string, params: Params = {}) =>
        (await exec<T>(this.catalogue.get(name), params))[0],
      runComposed: <T>(_unit: string, text: string, params: Params = {}) => exec<T>(text, params),
    };
  }

  private mapError(err: unknown): unknown {
    if (err instanceof AppError) return err;
    if (err instanceof Neo4jError) {
      if (CONNECTIVITY_CODES.has(err.code)) {
        this.health.markDown(err);
        return unavailable('the database is unreachable; retry shortly', RETRY_AFTER_S, err);
      }
      if (err.code === 'Neo.ClientError.Schema.ConstraintValidationFailed') {
        return conflict('a resource with the same unique value already exists');
      }
      if (err.code.startsWith('Neo.TransientError.') || err.code.includes('TransactionTimedOut')) {
        return unavailable('the database is busy; retry shortly', 1, err);
      }
    }
    return err;
  }
}

/** Integers become Neo4j integers (JS numbers would arrive as floats); the rest passes as is. */
export function toNeo4jParams(value: unknown): never {
  return convertParam(value) as never;
}

function convertParam(value: unknown): unknown {
  if (typeof value === 'number' && Number.isInteger(value)) return neo4j.int(value);
  if (Array.isArray(value)) return value.map(convertParam);
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = convertParam(v);
    return out;
  }
  return value;
}

/** Neo4j values as plain JS: temporals as RFC 3339 strings, nodes as their properties. */
export function fromNeo4j(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'object') return value;
  if (neo4j.isInt(value)) return value.toNumber();
  if (isDateTime(value) || isLocalDateTime(value) || isDate(value)) {
    return value.toStandardDate().toISOString();
  }
  if (isDuration(value)) return value.toString();
  if (isNode(value) || isRelationship(value)) return fromNeo4j(value.properties);
  if (Array.isArray(value)) return value.map(fromNeo4j);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = fromNeo4j(v);
  return out;
}
