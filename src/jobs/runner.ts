import type { Counter } from 'prom-client';
import { defineQueries } from '../db/catalogue.js';
import type { Database, Tx } from '../db/database.js';
import { newId } from '../ids.js';
import type { Logger } from '../logging/logger.js';
import { currentTraceparent, failed, inSpan, SpanKind, type Span } from '../tracing/tracing.js';

const Q = defineQueries('jobs', [
  'schedule_claim',
  'schedule_done',
  'schedule_release',
  'enqueue',
  'candidates',
  'claim',
  'renew',
  'progress',
  'finish',
  'get',
  'purge',
]);

/** Work that recurs. */
export interface PeriodicTask {
  name: string;
  everyMs: number;
  /**
   * `process`: every process runs it on its own timer (it keeps something of this process
   * current: its feed, keys, records, index). `instance`: every instance that does the background
   * work runs it on its own timer (on a host with a background process, that process alone).
   * `cluster`: it runs once per period across all instances, under a lease in Neo4j; when the
   * instance running it stops, another takes the next run.
   */
  scope: 'process' | 'instance' | 'cluster';
  run(signal: AbortSignal): Promise<void>;
}

/** What a one-off job's handler receives. */
export interface JobContext<P = unknown> {
  id: string;
  payload: P;
  /** 1 on the first run; more when an earlier run failed or its instance stopped. */
  attempt: number;
  /** Where an interrupted earlier run got to, as it last reported. */
  progress: unknown;
  /**
   * Aborted when the instance shuts down: stop soon by throwing (`signal.throwIfAborted()`);
   * the job is then released for another instance to resume. Returning means the job is done.
   */
  signal: AbortSignal;
  /** Records how far the job got (also what a resumed run starts from). */
  reportProgress(progress: unknown): Promise<void>;
}

export type JobHandler<P = unknown> = (job: JobContext<P>) => Promise<void>;

/** A job as this instance claims it (cypher/jobs/claim.cypher). */
interface ClaimedJob {
  id: string;
  kind: string;
  payload: string;
  attempts: number;
  max_attempts: number;
  progress: string | null;
  /** The request that queued it, when it carried a trace (src/tracing). */
  trace_parent: string | null;
}

export interface JobRecord {
  id: string;
  kind: string;
  status: 'pending' | 'running' | 'completed' | 'failed';
  payload: unknown;
  attempts: number;
  progress: unknown;
  error: string | null;
}

export interface JobRunnerOptions {
  /** Names this instance in leases. */
  instanceId: string;
  /** How often to look for due jobs and cluster tasks. */
  pollMs: number;
  /** A lease lasts this long unless renewed; the holder renews it at a third of that. */
  leaseMs: number;
  logger: Logger;
  /** Jobs run at the same time on this instance. */
  concurrency?: number;
  /** Finished jobs are forgotten after this long. */
  retentionMs?: number;
  /** A failed job is retried after this, doubled at each further failure. */
  retryBaseMs?: number;
  /** Counts the periodic task runs this instance finishes (background_task_runs_total). */
  runs?: Pick<Counter<'task'>, 'inc'>;
  /**
   * Whether this process does the background work: queued jobs, `instance` and `cluster` tasks
   * (default). Without it, it runs its `process` tasks alone and leaves the rest to the host's
   * background process; it still queues jobs.
   */
  background?: boolean;
  /** Where this process does not run jobs: told when it queues one due now (to wake the one that does). */
  queued?: () => void;
}

const DEFAULT_ATTEMPTS = 5;

interface Running {
  controller: AbortController;
  done: Promise<void>;
}

/**
 * Background work of one instance: periodic tasks and one-off jobs. Jobs are nodes in Neo4j,
 * claimed under a lease that the instance renews while it works, so that with several
 * instances a job runs once, and a job whose instance stopped (crashed, or was killed) is taken
 * over once its lease runs out. `start` and `stop` belong to the runtime alone.
 */
export class JobRunner {
  private readonly tasks: PeriodicTask[] = [];
  private readonly handlers = new Map<string, JobHandler<never>>();
  private readonly running = new Map<string, Running>();
  /** When each cluster task is next due, as last seen in the graph. */
  private readonly nextDue = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private started = false;
  private stopping = false;
  private claiming = false;
  /** A job was queued while due jobs were being looked for. */
  private lookAgain = false;

  constructor(
    private readonly db: Database,
    private readonly options: JobRunnerOptions,
  ) {}

  every(task: PeriodicTask): void {
    if (this.started) throw new Error('register tasks before the runner starts');
    this.tasks.push(task);
  }

  handle<P>(kind: string, handler: JobHandler<P>): void {
    if (this.started) throw new Error('register handlers before the runner starts');
    this.handlers.set(kind, handler);
  }

  /**
   * Adds a job in the caller's transaction, so it exists if and only if the change that asks
   * for it commits.
   */
  async enqueue(
    tx: Tx,
    kind: string,
    payload: unknown,
    options: { runAt?: Date; maxAttempts?: number; id?: string } = {},
  ): Promise<string> {
    const id = options.id ?? newId('job');
    // A job due now is looked for as soon as it commits, not at the next poll.
    if (!options.runAt || options.runAt.getTime() <= Date.now()) tx.afterCommit(() => this.wake());
    await tx.run(Q.enqueue, {
      id,
      kind,
      payload: JSON.stringify(payload ?? null),
      maxAttempts: options.maxAttempts ?? DEFAULT_ATTEMPTS,
      runAt: (options.runAt ?? new Date()).toISOString(),
      now: new Date().toISOString(),
      // The run joins the trace of the request that queued the job (null when there is none).
      traceParent: currentTraceparent(null),
    });
    return id;
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const row = await this.db.first<{ job: Record<string, unknown> }>(Q.get, { id });
    if (!row) return undefined;
    const job = row.job;
    return {
      id: job['id'] as string,
      kind: job['kind'] as string,
      status: job['status'] as JobRecord['status'],
      payload: parseJson(job['payload']),
      attempts: job['attempts'] as number,
      progress: parseJson(job['progress']),
      error: (job['error'] as string | null) ?? null,
    };
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    const background = this.options.background ?? true;
    for (const task of this.tasks) {
      if (task.scope === 'process' || (background && task.scope === 'instance'))
        this.loop(task.everyMs, () => this.runInstanceTask(task));
    }
    if (!background) return;
    const clusterTasks = this.tasks.filter((t) => t.scope === 'cluster');
    const retentionMs = this.options.retentionMs ?? 7 * 86_400_000;
    clusterTasks.push({
      name: 'jobs.purge',
      everyMs: Math.min(retentionMs, 3_600_000),
      scope: 'cluster',
      run: () => this.purge(retentionMs),
    });
    this.loop(this.options.pollMs, async () => {
      await Promise.all(clusterTasks.map((task) => this.runClusterTask(task)));
      await this.claimJobs();
    });
    this.loop(Math.max(50, Math.floor(this.options.leaseMs / 3)), () => this.renewLeases());
  }

  /**
   * Stops taking work, asks running work to stop (its signal aborts) and waits for it at most
   * `timeoutMs`; jobs still unfinished then are released so that another instance takes them
   * at once rather than after their lease.
   */
  async stop(timeoutMs: number): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const run of this.running.values()) run.controller.abort();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([Promise.all([...this.running.values()].map((r) => r.done)), timedOut]);
    clearTimeout(timer);
    const left = [...this.running.keys()].filter((key) => key.startsWith('job:'));
    await Promise.all(
      left.map((key) => this.finish(key.slice(4), { status: 'pending', error: null, release: true })),
    );
  }

  /**
   * Runs `work` at once and then `everyMs` after each run ends (so never overlapping itself),
   * until the runner stops.
   */
  private loop(everyMs: number, work: () => Promise<void>): void {
    const schedule = (delayMs: number): void => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (this.stopping) return;
        work()
          .catch((err: unknown) => this.options.logger.warn({ err }, 'background work failed'))
          .finally(() => {
            if (!this.stopping) schedule(everyMs);
          });
      }, delayMs);
      timer.unref();
      this.timers.add(timer);
    };
    schedule(0);
  }

  private async runInstanceTask(task: PeriodicTask): Promise<void> {
    await this.track(`task:${task.name}`, async (signal) => {
      try {
        await task.run(signal);
      } catch (err) {
        if (signal.aborted) return;
        this.options.logger.warn({ err, task: task.name }, 'periodic task failed');
      }
      this.options.runs?.inc({ task: task.name });
    });
  }

  private async runClusterTask(task: PeriodicTask): Promise<void> {
    const due = this.nextDue.get(task.name);
    if ((due !== undefined && due > Date.now()) || this.running.has(`schedule:${task.name}`)) return;
    const row = await this.db.write(Q.schedule_claim, (tx) =>
      tx.first<{ claimed: boolean; nextRunAt: string }>(Q.schedule_claim, {
        name: task.name,
        owner: this.options.instanceId,
        leaseMs: this.options.leaseMs,
        now: new Date().toISOString(),
      }),
    );
    if (!row?.claimed) {
      if (row) this.nextDue.set(task.name, Date.parse(row.nextRunAt));
      return;
    }
    // The period counts from when the run starts, however long the claim took.
    const startedAt = new Date().toISOString();
    // Not awaited: a long task must not hold up the poll loop (jobs, other tasks).
    void this.track(`schedule:${task.name}`, async (signal) => {
      let error: string | null = null;
      try {
        await task.run(signal);
      } catch (err) {
        if (!signal.aborted) {
          error = err instanceof Error ? err.message : String(err);
          this.options.logger.warn({ err, task: task.name }, 'periodic task failed');
        }
      }
      // Stopped before it ended (the runner stopping): not a run, and not a failure. The task
      // stays due for the next instance that looks.
      if (signal.aborted) {
        await this.db
          .write(Q.schedule_release, (tx) =>
            tx.run(Q.schedule_release, { name: task.name, owner: this.options.instanceId }),
          )
          .catch((err: unknown) =>
            this.options.logger.warn({ err, task: task.name }, 'could not release a periodic run'),
          );
        return;
      }
      this.options.runs?.inc({ task: task.name });
      const done = await this.db
        .write(Q.schedule_done, (tx) =>
          tx.first<{ nextRunAt: string }>(Q.schedule_done, {
            name: task.name,
            owner: this.options.instanceId,
            startedAt,
            everyMs: task.everyMs,
            error,
          }),
        )
        .catch((err: unknown) => {
          this.options.logger.warn({ err, task: task.name }, 'could not record a periodic run');
          return undefined;
        });
      if (done) this.nextDue.set(task.name, Date.parse(done.nextRunAt));
    });
  }

  /**
   * Looks for due jobs now (a job was queued), where this process runs them; a look under way
   * looks once more after it.
   */
  wake(): void {
    if (this.options.background === false) {
      this.options.queued?.();
      return;
    }
    if (!this.started || this.stopping) return;
    // A look under way may have read the due jobs before this one committed: one more after it.
    if (this.claiming) {
      this.lookAgain = true;
      return;
    }
    this.claimJobs().catch((err: unknown) => this.options.logger.warn({ err }, 'could not claim jobs'));
  }

  private async claimJobs(): Promise<void> {
    if (this.claiming) return;
    this.claiming = true;
    try {
      do {
        this.lookAgain = false;
        await this.claimDueJobs();
      } while (this.lookAgain && !this.stopping);
    } finally {
      this.claiming = false;
    }
  }

  private async claimDueJobs(): Promise<void> {
    const free =
      (this.options.concurrency ?? 2) - [...this.running.keys()].filter((k) => k.startsWith('job:')).length;
    if (free <= 0 || this.handlers.size === 0 || this.stopping) return;
    const now = new Date().toISOString();
    const candidates = await this.db.run<{ id: string }>(Q.candidates, {
      now,
      kinds: [...this.handlers.keys()],
      limit: free * 2,
    });
    let started = 0;
    for (const { id } of candidates) {
      if (started >= free || this.stopping) break;
      const row = await this.db.write(Q.claim, (tx) =>
        tx.first<{ job: ClaimedJob }>(Q.claim, {
          id,
          owner: this.options.instanceId,
          leaseMs: this.options.leaseMs,
          now: new Date().toISOString(),
        }),
      );
      if (!row) continue;
      started += 1;
      void this.runJob(row.job);
    }
  }

  private async runJob(job: ClaimedJob): Promise<void> {
    const handler = this.handlers.get(job.kind)!;
    const span = {
      kind: SpanKind.CONSUMER,
      parent: job.trace_parent,
      attributes: { 'pas.job.id': job.id, 'pas.job.kind': job.kind, 'pas.job.attempt': job.attempts },
    };
    await this.track(`job:${job.id}`, (signal) =>
      inSpan(`job ${job.kind}`, span, (traced) => this.runHandler(handler, job, signal, traced)),
    );
  }

  private async runHandler(
    handler: JobHandler<never>,
    job: ClaimedJob,
    signal: AbortSignal,
    span: Span | undefined,
  ): Promise<void> {
    try {
      await handler({
        id: job.id,
        payload: parseJson(job.payload) as never,
        attempt: job.attempts,
        progress: parseJson(job.progress),
        signal,
        reportProgress: async (progress) => {
          await this.db.write(Q.progress, (tx) =>
            tx.run(Q.progress, {
              id: job.id,
              owner: this.options.instanceId,
              progress: JSON.stringify(progress),
            }),
          );
        },
      });
      await this.finish(job.id, { status: 'completed', error: null });
    } catch (err) {
      // A run cut short by shutdown is released for another instance to take over at once;
      // only real failures count against the job.
      if (signal.aborted) {
        await this.finish(job.id, { status: 'pending', error: null, release: true });
        return;
      }
      if (span) failed(span, err);
      const error = err instanceof Error ? err.message : String(err);
      this.options.logger.warn({ err, job: job.id, kind: job.kind }, 'job failed');
      const retry = job.attempts < job.max_attempts;
      await this.finish(job.id, {
        status: retry ? 'pending' : 'failed',
        error,
        ...(retry
          ? { runAt: new Date(Date.now() + (this.options.retryBaseMs ?? 5_000) * 2 ** (job.attempts - 1)) }
          : {}),
      });
    }
  }

  private async finish(
    id: string,
    outcome: { status: JobRecord['status']; error: string | null; runAt?: Date; release?: boolean },
  ): Promise<void> {
    try {
      await this.db.write(Q.finish, (tx) =>
        tx.run(Q.finish, {
          id,
          owner: this.options.instanceId,
          status: outcome.status,
          error: outcome.error,
          runAt: outcome.runAt?.toISOString() ?? null,
          release: outcome.release ?? false,
          now: new Date().toISOString(),
        }),
      );
    } catch (err) {
      // The lease runs out on its own, and another instance takes the job over then.
      this.options.logger.warn({ err, job: id }, 'could not record the end of a job');
    }
  }

  /** Keeps the leases of running work alive, so no other instance takes it over meanwhile. */
  private async renewLeases(): Promise<void> {
    const keys = [...this.running.keys()];
    const jobs = keys.filter((k) => k.startsWith('job:')).map((k) => k.slice(4));
    const schedules = keys.filter((k) => k.startsWith('schedule:')).map((k) => k.slice(9));
    if (jobs.length === 0 && schedules.length === 0) return;
    await this.db.write(Q.renew, (tx) =>
      tx.run(Q.renew, {
        jobs,
        schedules,
        owner: this.options.instanceId,
        leaseMs: this.options.leaseMs,
        now: new Date().toISOString(),
      }),
    );
  }

  private async track(key: string, work: (signal: AbortSignal) => Promise<void>): Promise<void> {
    const controller = new AbortController();
    const done = work(controller.signal).finally(() => this.running.delete(key));
    this.running.set(key, { controller, done });
    await done;
  }

  private async purge(retentionMs: number): Promise<void> {
    const before = new Date(Date.now() - retentionMs).toISOString();
    for (;;) {
      const row = await this.db.write(Q.purge, (tx) =>
        tx.first<{ removed: number }>(Q.purge, { before, batch: 1_000 }),
      );
      if ((row?.removed ?? 0) < 1_000) return;
    }
  }
}

function parseJson(value: unknown): unknown {
  return typeof value === 'string' ? (JSON.parse(value) as unknown) : (value ?? null);
}
