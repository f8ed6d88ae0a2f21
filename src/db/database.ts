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
  type Transaction,
} from 'neo4j-driver';
import { AppError, conflict, unavailable } from '../errors/errors.js';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from '../metrics.js';
import { defineQueries, type Catalogue } from './catalogue.js';
import { DbHealth } from './health.js';

const Q = defineQueries('system', ['ping']);

export type Params = Record<string, unknown>;
export type Row = Record<string, unknown>;

/** One operator of an executed query plan. */
export interface PlanOperator {
  operator: string;
  rows: number;
}

interface PlanStep {
  operatorType: string;
  rows?: number;
  children: PlanStep[];
}

/** Errors Neo4j marks as worth retrying (deadlocks, lock timeouts, a busy database). */
function isTransient(err: unknown): boolean {
  return err instanceof Neo4jError && err.code.startsWith('Neo.TransientError.');
}

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
    return this.statement<T>(name, this.catalogue.get(name), params);
  }

  /**
   * A read whose work runs a single statement (or statements that need no common snapshot):
   * each runs as an auto-commit query, one network round trip instead of the two of a managed
   * transaction, which matters on the per-request token check and the common lookups.
   */
  readStatements<T>(unit: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    const exec = <R>(name: string, text: string, params: Params): Promise<R[]> =>
      this.statement<R>(name, text, params);
    return work({
      run: <R>(name: string, params: Params = {}) => exec<R>(name, this.catalogue.get(name), params),
      first: async <R>(name: string, params: Params = {}) =>
        (await exec<R>(name, this.catalogue.get(name), params))[0],
      runComposed: <R>(name: string, text: string, params: Params = {}) => exec<R>(name, text, params),
    }).catch((err: unknown) => {
      throw err instanceof AppError ? err : this.mapError(err);
    });
  }

  /** One auto-commit read statement, retried (briefly) on transient errors like a managed one. */
  private async statement<T>(unit: string, text: string, params: Params): Promise<T[]> {
    if (!this.health.isUp) {
      throw unavailable('the database is unreachable; retry shortly', RETRY_AFTER_S);
    }
    const { metrics } = this.options;
    const endTimer = metrics.dbDuration.startTimer({ mode: 'read', unit });
    metrics.dbSessionsActive.inc();
    try {
      for (let attempt = 1; ; attempt += 1) {
        const session = this.driver.session({
          database: this.options.database,
          defaultAccessMode: neo4j.session.READ,
        });
        try {
          const result = await session.run(text, toNeo4jParams(params), {
            metadata: { app: 'principals-access-service', unit },
          });
          metrics.dbTransactions.inc({ mode: 'read', unit, outcome: 'ok' });
          return result.records.map((r) => fromNeo4j(r.toObject()) as T);
        } catch (err) {
          const retry = attempt < 3 && isTransient(err) && !CONNECTIVITY_CODES.has((err as Neo4jError).code);
          if (!retry) {
            metrics.dbTransactions.inc({ mode: 'read', unit, outcome: 'error' });
            throw this.mapError(err);
          }
          await new Promise((r) => setTimeout(r, 20 * attempt));
        } finally {
          await session.close().catch(() => undefined);
        }
      }
    } finally {
      metrics.dbSessionsActive.dec();
      endTimer();
    }
  }

  /**
   * Runs write work in an explicit transaction that is always rolled back: the database does
   * all of the work and keeps none of it (used to warm up the JIT before a measurement).
   */
  async rehearse(unit: string, work: (tx: Tx) => Promise<unknown>): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      const session = this.driver.session({
        database: this.options.database,
        defaultAccessMode: neo4j.session.WRITE,
      });
      const tx = session.beginTransaction({ metadata: { app: 'principals-access-service', unit } });
      try {
        await work(this.wrap(tx));
        return;
      } catch (err) {
        // Concurrent rehearsals that create the same unique values can deadlock, like real
        // writes; managed transactions retry those, and so does this.
        if (!isTransient(err) || attempt >= 5) throw this.mapError(err);
      } finally {
        await tx.rollback().catch(() => undefined);
        await session.close();
      }
    }
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

  /**
   * Runs a read statement under PROFILE and lists the operators of its executed plan, depth
   * first, with the rows each produced: how tests check that a query is served by an index.
   */
  async profile(text: string, params: Params = {}): Promise<PlanOperator[]> {
    const session = this.driver.session({
      database: this.options.database,
      defaultAccessMode: neo4j.session.READ,
    });
    try {
      const result = await session.run(`PROFILE ${text}`, toNeo4jParams(params));
      const operators: PlanOperator[] = [];
      const walk = (step: PlanStep): void => {
        operators.push({ operator: step.operatorType.replace(/@.*$/, ''), rows: step.rows ?? 0 });
        step.children.forEach(walk);
      };
      const plan: PlanStep | false = result.summary.profile || result.summary.plan;
      if (plan) walk(plan);
      return operators;
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

  private wrap(tx: ManagedTransaction | Transaction): Tx {
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
      if (isTransient(err) || err.code.includes('TransactionTimedOut')) {
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
  if (typeof value === 'number') return Number.isInteger(value) ? neo4j.int(value) : value;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i += 1) out[i] = convertParam(value[i]);
    return out;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const key in value) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = convertParam(v);
  }
  return out;
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
