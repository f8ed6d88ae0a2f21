import neo4j, {
  Neo4jError,
  type Driver,
  type ManagedTransaction,
  type Record as Neo4jRecord,
  type Session,
} from 'neo4j-driver';
import { AppError, conflict, unavailable, validationFailed } from '../errors/errors.js';
import type { Logger } from '../logging/logger.js';
import type { Metrics } from '../metrics.js';
import { timeSlices, within } from '../time.js';
import { inSpan, SpanKind, tracing, type Attributes } from '../tracing/tracing.js';
import { defineQueries, type Catalogue } from './catalogue.js';
import { DbHealth } from './health.js';
import { CONNECTIVITY_CODES, fromNeo4j, toNeo4jParams, type DriverOptions } from './driver.js';
import { readRanges } from './range-reader.js';
import { WriteThread } from './write-thread.js';

const Q = defineQueries('system', ['ping']);

export type Params = Record<string, unknown>;
export type Row = Record<string, unknown>;

/**
 * A query to run: the name of a catalogue query, or text assembled from a catalogue template
 * and generated predicates (src/db/compose.ts) under that template's name. Composed text holds
 * only catalogue text and whitelisted identifiers; every value goes in the parameters.
 */
export type Query = string | { readonly name: string; readonly text: string };

/** Runs queries and returns plain JS rows. */
export interface Reader {
  run<T = Row>(query: Query, params?: Params): Promise<T[]>;
  first<T = Row>(query: Query, params?: Params): Promise<T | undefined>;
}

/** A transaction of a unit of work. */
export interface Tx extends Reader {
  /**
   * Work to do in this transaction after the unit's own work, just before it commits. Hooks
   * belong to one attempt: when the driver retries the unit, the new attempt registers its own.
   */
  beforeCommit(hook: () => Promise<void>): void;
  /** Work to do once this transaction has committed; `write` awaits it before returning. */
  afterCommit(hook: () => Promise<void> | void): void;
  /**
   * 1 on the unit's first run. The driver runs a unit again when a transient error cuts it
   * short, and that includes a commit whose answer was lost: a retry may find the first run's
   * work already committed, which a create that chose its id beforehand can recognise.
   */
  readonly attempt: number;
}

/** Errors Neo4j marks as worth retrying (deadlocks, lock timeouts, a busy database). */
function isTransient(err: unknown): boolean {
  return err instanceof Neo4jError && err.code.startsWith('Neo.TransientError.');
}

export interface DatabaseOptions {
  database: string;
  maxPoolSize: number;
  logger: Logger;
  metrics: Metrics;
  probeIntervalMs?: number;
  /**
   * How long Neo4j lets one transaction run before it terminates it: a runaway statement must
   * not hold its connection, locks and memory while the client that asked has long given up.
   */
  txTimeoutMs: number;
  /** The same for background work whose statements legitimately run long (see `background()`). */
  backgroundTxTimeoutMs: number;
  /** Where the database is, for worker threads that read it with drivers of their own (`readRanges`). */
  connection?: { uri: string; user: string; password: string; driver?: Partial<DriverOptions> };
}

export { fromNeo4j, toNeo4jParams };

/** Seconds a client should wait before retrying while the database is away. */
const RETRY_AFTER_S = 5;

/** How many bookmarks an instance remembers having reached (see `Database.catchUp`). */
const MAX_REMEMBERED_BOOKMARKS = 10_000;

/**
 * The one way the service talks to Neo4j, with Neo4j values turned into plain JS and Neo4j
 * errors into domain errors. Its entry points:
 * - `run` / `first`: one read statement in its own auto-commit transaction (one round trip,
 *   briefly retried on transient errors); the database is itself a `Reader`.
 * - `read(unit, work)`: reads that must see one snapshot, in a managed read transaction.
 * - `write(unit, work)`: a managed write transaction, retried by the driver on transient errors
 *   (so `work` must be idempotent), with before- and after-commit hooks.
 * - `schema(statement)`: a schema statement in a transaction of its own (migrations).
 * - `ping()`: a cheap round trip for the readiness check and the recovery probe.
 *
 * Reads go in read-mode sessions and writes in write-mode ones, so that with a routing URI
 * (`neo4j://`, `neo4j+s://`) a cluster serves reads from its secondaries; Neo4j refuses a write
 * in a read-mode session, so a write sent the wrong way fails loudly instead of being routed to a
 * follower. Every session of this instance shares one bookmark manager: a statement starts only
 * once the server has every transaction this instance committed before it, so a request that
 * follows a write reads that write, whichever cluster member answers it.
 */
/** What a service needs of the database: transactions and single statements, nothing else. */
export type Transactions = Pick<Database, 'read' | 'write' | 'run' | 'first'>;

export class Database implements Reader {
  readonly health: DbHealth;
  private txTimeoutMs: number;
  /** The bookmarks of what this instance has committed, shared by all its sessions. */
  private readonly bookmarks = neo4j.bookmarkManager({
    bookmarksConsumer: async (bookmarks) => {
      const latest = [...bookmarks];
      this.latestBookmarks = { version: this.latestBookmarks.version + 1, bookmarks: latest };
      for (const bookmark of latest) this.remember(bookmark);
    },
  });
  /** What the bookmark manager holds, as it last said (it says so as it changes). */
  private latestBookmarks: { version: number; bookmarks: readonly string[] } = { version: 0, bookmarks: [] };
  /**
   * Bookmarks this instance has held or caught up with: its statements start at or after each of
   * them. Bounded; forgetting one only costs a round trip the next time it comes back.
   */
  private readonly reached = new Set<string>();

  constructor(
    readonly driver: Driver,
    readonly catalogue: Catalogue,
    private readonly options: DatabaseOptions,
  ) {
    this.txTimeoutMs = options.txTimeoutMs;
    options.metrics.dbPoolMax.set(options.maxPoolSize);
    this.health = new DbHealth(
      () => this.ping(),
      options.logger,
      (up) => options.metrics.dbUp.set(up ? 1 : 0),
      options.probeIntervalMs,
    );
  }

  /**
   * This database for background work whose statements legitimately outlast a request's
   * timeout (report pages, connector snapshots, bulk loads, loading the decision index): the
   * same driver, health and metrics, its transactions given the background timeout instead.
   */
  background(): Database {
    const view = Object.create(this) as Database;
    view.txTimeoutMs = this.options.backgroundTxTimeoutMs;
    return view;
  }

  run<T = Row>(query: Query, params: Params = {}): Promise<T[]> {
    return this.statement<T>(query, params);
  }

  async first<T = Row>(query: Query, params: Params = {}): Promise<T | undefined> {
    return (await this.statement<T>(query, params))[0];
  }

  /**
   * `run` for a statement that returns only strings, numbers, booleans, nulls and lists of them
   * (temporals as text): its rows as the driver reads them, without the conversion `run` makes
   * of every value. For bulk reads, such as loading the decision index, where that copy is a
   * large part of the time and the garbage.
   */
  runPlain<T = Row>(query: Query, params: Params = {}): Promise<T[]> {
    return this.statement<T>(query, params, plainRowsOf);
  }

  /** Whether `readRanges` can read with worker threads (the database's address is known). */
  get readsInParallel(): boolean {
    return this.options.connection !== undefined;
  }

  /**
   * A statement that pages by a key (`$after` exclusive, `$upTo` inclusive, `$batch` rows in key
   * order; its values plain, as for `runPlain`) read over key ranges side by side, each in a worker
   * thread with a driver of its own (src/db/range-reader.ts), from where this instance's writes
   * stand. `take` has each page as it comes, one at a time, on this thread.
   */
  async readRanges<T>(
    query: Query,
    ranges: readonly [after: string, upTo: string][],
    options: { batch: number; key: [column: string, property?: string] },
    take: (rows: T[]) => void | Promise<void>,
  ): Promise<void> {
    const connection = this.options.connection;
    if (!connection)
      throw new Error('the database address is not known: reading in parallel is not possible');
    if (!this.health.isUp) throw unavailable('the database is unreachable; retry shortly', RETRY_AFTER_S);
    const { name, text } = this.resolve(query);
    await readRanges(
      {
        connection: {
          uri: connection.uri,
          user: connection.user,
          password: connection.password,
          database: this.options.database,
        },
        name,
        text,
        ranges,
        batch: options.batch,
        key: options.key,
        bookmarks: [...this.latestBookmarks.bookmarks],
        timeoutMs: this.txTimeoutMs,
      },
      take as (rows: Record<string, unknown>[]) => void | Promise<void>,
    );
  }

  read<T>(unit: string, work: (tx: Reader) => Promise<T>): Promise<T> {
    return this.unitOfWork('read', unit, work);
  }

  write<T>(unit: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.unitOfWork('write', unit, work);
  }

  async schema(statement: string): Promise<void> {
    const session = this.driver.session({ database: this.options.database, bookmarkManager: this.bookmarks });
    try {
      // Migrations backfill whole labels and wait for indexes: background work, whoever calls.
      await session.run(statement, {}, { timeout: this.options.backgroundTxTimeoutMs });
    } catch (err) {
      throw this.mapError(err);
    } finally {
      await session.close();
    }
  }

  /** The bookmarks of everything this instance has committed so far, and a version of them. */
  committedBookmarks(): { version: number; bookmarks: readonly string[] } {
    return this.latestBookmarks;
  }

  /**
   * Makes every later statement of this instance start at or after the transactions these
   * bookmarks (another instance's, perhaps) name: false if the database does not have them within
   * `waitMs`. A bookmark Neo4j does not recognise is a validation error.
   */
  async catchUp(bookmarks: readonly string[], waitMs: number): Promise<boolean> {
    const missing = bookmarks.filter((bookmark) => !this.reached.has(bookmark));
    if (missing.length === 0) return true;
    if (!this.health.isUp) {
      throw unavailable('the database is unreachable; retry shortly', RETRY_AFTER_S);
    }
    const session = this.driver.session({
      database: this.options.database,
      defaultAccessMode: neo4j.session.READ,
      bookmarks: missing,
      bookmarkManager: this.bookmarks,
    });
    try {
      const statement = session.run(this.catalogue.get(Q.ping), {}, { timeout: waitMs });
      if (
        !(await within(
          statement.then(() => true),
          waitMs,
          () => false,
        ))
      )
        return false;
    } catch (err) {
      if (err instanceof Neo4jError && err.code.startsWith('Neo.ClientError.Transaction.InvalidBookmark')) {
        throw validationFailed('the consistency token names a state this database never had', [
          { pointer: '/headers/Consistency-Token', message: 'is not a token of this database' },
        ]);
      }
      if (err instanceof Neo4jError && err.code === 'Neo.TransientError.Transaction.BookmarkTimeout')
        return false;
      throw this.mapError(err);
    } finally {
      void session.close().catch(() => undefined);
    }
    // Whatever the server answered, later statements carry these bookmarks too.
    await this.bookmarks.updateBookmarks([], missing);
    for (const bookmark of missing) this.remember(bookmark);
    return true;
  }

  /**
   * `query` (a write) run on a worker thread with a driver of its own (src/db/write-thread.ts);
   * what it commits joins this instance's bookmarks. Undefined when the database's address is not
   * known (no other driver can be opened).
   */
  writeThread(query: Query): WriteThread | undefined {
    const connection = this.options.connection;
    if (!connection) return undefined;
    const { driver = {}, ...address } = connection;
    return new WriteThread(
      {
        connection: { ...address, database: this.options.database },
        driver,
        txTimeoutMs: this.txTimeoutMs,
        statement: this.resolve(query),
      },
      (bookmarks) => this.adoptBookmarks(bookmarks),
    );
  }

  /**
   * Makes this instance's later statements start after transactions a worker thread of it
   * committed with a driver of its own (their bookmarks): a request after such a write reads it.
   */
  async adoptBookmarks(bookmarks: readonly string[]): Promise<void> {
    if (bookmarks.length === 0) return;
    await this.bookmarks.updateBookmarks([], bookmarks);
    for (const bookmark of bookmarks) this.remember(bookmark);
  }

  private remember(bookmark: string): void {
    if (this.reached.size >= MAX_REMEMBERED_BOOKMARKS) this.reached.clear();
    this.reached.add(bookmark);
  }

  async ping(timeoutMs = 2_000): Promise<void> {
    const session = this.driver.session({ database: this.options.database });
    try {
      const statement = session.run(this.catalogue.get(Q.ping), {}, { timeout: timeoutMs });
      await within(
        statement.then(() => undefined),
        timeoutMs,
        () => {
          throw new Error(`ping timed out after ${timeoutMs} ms`);
        },
      );
    } finally {
      void session.close().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    this.health.stop();
    await this.driver.close();
  }

  private resolve(query: Query): { name: string; text: string } {
    return typeof query === 'string' ? { name: query, text: this.catalogue.get(query) } : query;
  }

  private statement<T>(
    query: Query,
    params: Params,
    rows: (records: readonly Neo4jRecord[]) => Promise<T[]> = rowsOf,
  ): Promise<T[]> {
    if (!tracing()) return this.statementOnce(query, params, rows);
    const name = typeof query === 'string' ? query : query.name;
    return inSpan(`neo4j read ${name}`, this.spanOf('read', name), () =>
      this.statementOnce(query, params, rows),
    );
  }

  /** A transaction's span: what the OpenTelemetry database conventions name. */
  private spanOf(mode: 'read' | 'write', unit: string): { kind: SpanKind; attributes: Attributes } {
    return {
      kind: SpanKind.CLIENT,
      attributes: {
        'db.system.name': 'neo4j',
        'db.namespace': this.options.database,
        'db.operation.name': mode,
        'db.query.summary': unit,
      },
    };
  }

  private async statementOnce<T>(
    query: Query,
    params: Params,
    rows: (records: readonly Neo4jRecord[]) => Promise<T[]>,
  ): Promise<T[]> {
    if (!this.health.isUp) {
      throw unavailable('the database is unreachable; retry shortly', RETRY_AFTER_S);
    }
    const { name, text } = this.resolve(query);
    const { metrics } = this.options;
    const endTimer = metrics.dbDuration.startTimer({ mode: 'read', unit: name });
    metrics.dbSessionsActive.inc();
    try {
      for (let attempt = 1; ; attempt += 1) {
        const session = this.driver.session({
          database: this.options.database,
          defaultAccessMode: neo4j.session.READ,
          bookmarkManager: this.bookmarks,
        });
        try {
          const result = await session.run(text, toNeo4jParams(params), {
            metadata: { app: 'principals-access-service', unit: name },
            timeout: this.txTimeoutMs,
          });
          metrics.dbTransactions.inc({ mode: 'read', unit: name, outcome: 'ok' });
          return await rows(result.records);
        } catch (err) {
          const retry = attempt < 3 && isTransient(err) && !CONNECTIVITY_CODES.has((err as Neo4jError).code);
          if (!retry) {
            metrics.dbTransactions.inc({ mode: 'read', unit: name, outcome: 'error' });
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

  private unitOfWork<T>(mode: 'read' | 'write', unit: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    if (!tracing()) return this.unitOnce(mode, unit, work);
    return inSpan(`neo4j ${mode} ${unit}`, this.spanOf(mode, unit), () => this.unitOnce(mode, unit, work));
  }

  private async unitOnce<T>(mode: 'read' | 'write', unit: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    if (!this.health.isUp) {
      throw unavailable('the database is unreachable; retry shortly', RETRY_AFTER_S);
    }
    const { metrics } = this.options;
    const endTimer = metrics.dbDuration.startTimer({ mode, unit });
    let session: Session | undefined;
    // The after-commit hooks of the attempt that committed (the driver may run `fn` again).
    let committed: (() => Promise<void> | void)[] = [];
    let result: T;
    metrics.dbSessionsActive.inc();
    try {
      session = this.driver.session({
        database: this.options.database,
        defaultAccessMode: mode === 'read' ? neo4j.session.READ : neo4j.session.WRITE,
        bookmarkManager: this.bookmarks,
      });
      const txConfig = { metadata: { app: 'principals-access-service', unit }, timeout: this.txTimeoutMs };
      let attempt = 0;
      const fn = async (tx: ManagedTransaction): Promise<T> => {
        const before: (() => Promise<void>)[] = [];
        const after: (() => Promise<void> | void)[] = [];
        attempt += 1;
        const value = await work(this.wrap(tx, before, after, attempt));
        for (const hook of before) await hook();
        committed = after;
        return value;
      };
      result =
        mode === 'read' ? await session.executeRead(fn, txConfig) : await session.executeWrite(fn, txConfig);
      metrics.dbTransactions.inc({ mode, unit, outcome: 'ok' });
    } catch (err) {
      metrics.dbTransactions.inc({ mode, unit, outcome: err instanceof AppError ? 'rejected' : 'error' });
      throw this.mapError(err);
    } finally {
      metrics.dbSessionsActive.dec();
      endTimer();
      if (session) await session.close().catch(() => undefined);
    }
    for (const hook of committed) {
      try {
        await hook();
      } catch (err) {
        // The change is committed and will be acknowledged; a failing follower cannot undo it.
        this.options.logger.error({ err, unit }, 'after-commit work failed');
      }
    }
    return result;
  }

  private wrap(
    tx: ManagedTransaction,
    before: (() => Promise<void>)[],
    after: (() => Promise<void> | void)[],
    attempt: number,
  ): Tx {
    const exec = async <T>(query: Query, params: Params): Promise<T[]> => {
      const result = await tx.run(this.resolve(query).text, toNeo4jParams(params));
      return rowsOf<T>(result.records);
    };
    return {
      run: <T>(query: Query, params: Params = {}) => exec<T>(query, params),
      first: async <T>(query: Query, params: Params = {}) => (await exec<T>(query, params))[0],
      beforeCommit: (hook) => {
        before.push(hook);
      },
      afterCommit: (hook) => {
        after.push(hook);
      },
      attempt,
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
      // Neo4j 5 ends a transaction past its timeout with
      // Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration (the timeout this
      // service sets) or ...TransactionTimedOut (the server's own limit): nothing was committed,
      // and the same work may well succeed once the database is less busy.
      if (isTransient(err) || err.code.includes('TransactionTimedOut')) {
        return unavailable('the database is busy; retry shortly', 1, err);
      }
    }
    return err;
  }
}

/** A result this short is converted in one go: checking the clock would cost more. */
const ROWS_AT_ONCE = 64;
/** The longest a large result's conversion holds the event loop before letting it turn. */
const ROWS_SLICE_MS = 2;

/**
 * A statement's records as plain rows. A large result (a connector's hundred thousand users, the
 * principals a sync's batch names) is converted for at most a couple of milliseconds at a time,
 * the event loop turning between, so that reading it never holds up the requests being served for
 * longer than that, however wide its rows.
 */
async function rowsOf<T>(records: readonly Neo4jRecord[]): Promise<T[]> {
  if (records.length <= ROWS_AT_ONCE) return records.map((r) => fromNeo4j(r.toObject()) as T);
  const rows: T[] = new Array<T>(records.length);
  const turn = timeSlices(ROWS_SLICE_MS);
  for (let start = 0; start < records.length; start += ROWS_AT_ONCE) {
    const wait = turn();
    if (wait) await wait;
    const end = Math.min(records.length, start + ROWS_AT_ONCE);
    for (let i = start; i < end; i++) rows[i] = fromNeo4j(records[i]!.toObject()) as T;
  }
  return rows;
}

/** Records whose values need no conversion (see `Database.runPlain`) as rows. */
function plainRowsOf<T>(records: readonly Neo4jRecord[]): Promise<T[]> {
  const rows = new Array<T>(records.length);
  for (let i = 0; i < records.length; i++) rows[i] = records[i]!.toObject() as T;
  return Promise.resolve(rows);
}
