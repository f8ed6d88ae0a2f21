/**
 * In-memory stand-ins for what a domain service depends on besides its repository: the
 * database's units of work, the event sink and the operation context. With them (and a
 * repository over Maps) a service's rules run in unit tests without Neo4j.
 */
import type { AuditEventInput, OperationContext } from '../../src/audit/audit.js';
import type { Database, Params, Query, Reader, Tx } from '../../src/db/database.js';
import type { EventSink } from '../../src/events/sink.js';

/** The database as the services use it. */
export type UnitsOfWork = Pick<Database, 'read' | 'write' | 'run' | 'first'>;

/** A transaction that runs no query: the fake repositories ignore it, the hooks are kept. */
export class FakeTx implements Tx {
  readonly before: (() => Promise<void>)[] = [];
  readonly after: (() => Promise<void> | void)[] = [];

  constructor(readonly attempt: number) {}

  run<T>(query: Query, _params?: Params): Promise<T[]> {
    return Promise.reject(new Error(`a unit test runs no query (${nameOf(query)})`));
  }

  first<T>(query: Query, _params?: Params): Promise<T | undefined> {
    return Promise.reject(new Error(`a unit test runs no query (${nameOf(query)})`));
  }

  beforeCommit(hook: () => Promise<void>): void {
    this.before.push(hook);
  }

  afterCommit(hook: () => Promise<void> | void): void {
    this.after.push(hook);
  }
}

const nameOf = (query: Query): string => (typeof query === 'string' ? query : query.name);

/**
 * Units of work as `Database` runs them, without a database: `write` runs the unit, then its
 * before-commit hooks (where the sink writes the events), then its after-commit hooks. A unit
 * that throws commits nothing: its hooks are dropped (the fake repositories do not roll back,
 * so the services' checks must come before their writes, as they do). `lostCommitAnswers`
 * makes the next writes commit and then run again, as the driver does when a commit's answer
 * is lost.
 */
export class FakeDatabase implements UnitsOfWork {
  /** The units run, in order, as `read:<unit>` or `write:<unit>`. */
  readonly units: string[] = [];
  /** How many of the coming commits lose their answer (each one runs the unit again). */
  lostCommitAnswers = 0;
  /** Units whose writes fail with the given error, as when the database is away. */
  readonly failing = new Map<string, Error>();

  run<T>(query: Query, _params?: Params): Promise<T[]> {
    return Promise.reject(new Error(`a unit test runs no query (${nameOf(query)})`));
  }

  first<T>(query: Query, _params?: Params): Promise<T | undefined> {
    return Promise.reject(new Error(`a unit test runs no query (${nameOf(query)})`));
  }

  async read<T>(unit: string, work: (tx: Reader) => Promise<T>): Promise<T> {
    this.units.push(`read:${unit}`);
    return work(new FakeTx(1));
  }

  async write<T>(unit: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    this.units.push(`write:${unit}`);
    const failure = this.failing.get(unit);
    if (failure) throw failure;
    for (let attempt = 1; ; attempt += 1) {
      const tx = new FakeTx(attempt);
      const value = await work(tx);
      for (const hook of tx.before) await hook();
      // Committed; when the answer is lost the driver runs the unit again and only the last
      // attempt's after-commit hooks run.
      if (this.lostCommitAnswers > 0) {
        this.lostCommitAnswers -= 1;
        continue;
      }
      for (const hook of tx.after) await hook();
      return value;
    }
  }
}

/** An audit event as a service recorded it, with the context it was recorded in. */
export type RecordedEvent = AuditEventInput & { op: OperationContext };

/**
 * The event sink, keeping events in memory. Like the real sink it writes a transaction's
 * events just before that transaction commits, so the events of a unit that failed never
 * appear.
 */
export class FakeEventSink implements Pick<EventSink, 'record'> {
  /** The events of committed units, in the order they were recorded. */
  readonly events: RecordedEvent[] = [];
  private next = 0;

  record(tx: Tx, op: OperationContext, input: AuditEventInput): string {
    this.next += 1;
    const id = `evt_test_${this.next}`;
    tx.beforeCommit(async () => {
      this.events.push({ ...input, op });
    });
    return id;
  }

  /** The types of the committed events, in order. */
  types(): string[] {
    return this.events.map((e) => e.type);
  }
}

/** Who acts in a test: a client, through a request with its own id. */
export function operation(actorId = 'cli_tester'): OperationContext {
  return {
    actor: { type: 'client', id: actorId },
    meta: { requestId: 'req-1', sourceIp: '192.0.2.10', userAgent: 'unit-test' },
  };
}

/** Runs `work` and answers the error it throws, failing when it throws none. */
export async function rejection(work: Promise<unknown>): Promise<Error> {
  try {
    await work;
  } catch (err) {
    if (err instanceof Error) return err;
    throw new Error(`threw a non-error: ${String(err)}`, { cause: err });
  }
  throw new Error('expected a rejection, but the work succeeded');
}

/** A fixed page: the first one, ten items long. */
export const FIRST_PAGE = { page: 1, limit: 10, skip: 0 };
