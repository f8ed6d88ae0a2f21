import { expect } from 'chai';
import { JobRunner, type JobRunnerOptions } from '../../src/jobs/runner.js';
import { useApp } from '../helpers/fixture.js';
import { cypher } from '../helpers/db.js';
import { eventually, until } from '../helpers/wait.js';

describe('background jobs', () => {
  const runners: JobRunner[] = [];

  const fx = useApp();
  afterEach(async () => {
    await Promise.all(runners.splice(0).map((r) => r.stop(200)));
  });

  function runner(instanceId: string, options: Partial<JobRunnerOptions> = {}): JobRunner {
    const r = new JobRunner(fx.app.runtime.db, {
      instanceId,
      pollMs: 50,
      leaseMs: 600,
      retryBaseMs: 50,
      logger: fx.app.logger,
      ...options,
    });
    runners.push(r);
    return r;
  }

  async function enqueue(
    r: JobRunner,
    kind: string,
    payload: unknown,
    maxAttempts?: number,
  ): Promise<string> {
    return fx.app.runtime.db.write('test/enqueue', (tx) =>
      r.enqueue(tx, kind, payload, maxAttempts === undefined ? {} : { maxAttempts }),
    );
  }

  /** Settles when `signal` aborts (the runner stops), so that no handler outlives its test. */
  const aborted = (signal: AbortSignal): Promise<void> =>
    new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));

  it('runs each job exactly once while two instances compete for it', async () => {
    const kind = `count-${Date.now()}`;
    const runs: { job: string; instance: string }[] = [];
    const a = runner('instance-a');
    const b = runner('instance-b');
    // Jobs hold until both instances have taken one: neither can run them all alone.
    let bothTook!: () => void;
    const bothTaking = new Promise<void>((resolve) => (bothTook = resolve));
    for (const [r, name] of [
      [a, 'instance-a'],
      [b, 'instance-b'],
    ] as const) {
      r.handle<{ n: number }>(kind, async (job) => {
        runs.push({ job: job.id, instance: name });
        if (new Set(runs.map((run) => run.instance)).size === 2) bothTook();
        await Promise.race([bothTaking, aborted(job.signal)]);
        job.signal.throwIfAborted();
      });
    }
    const ids = await Promise.all(Array.from({ length: 12 }, (_, n) => enqueue(a, kind, { n })));
    a.start();
    b.start();
    await until('both instances to take a job', () => new Set(runs.map((r) => r.instance)).size === 2, 5_000);
    await eventually(
      () => Promise.all(ids.map((id) => a.get(id))),
      (jobs) => jobs.every((j) => j?.status === 'completed'),
      10_000,
    );
    expect(runs.map((r) => r.job).sort()).to.deep.equal([...ids].sort());
    expect(new Set(runs.map((r) => r.instance)).size, 'both instances took jobs').to.equal(2);
  });

  it('takes over a job whose instance stopped renewing its lease, keeping its progress', async () => {
    const kind = `takeover-${Date.now()}`;
    const b = runner('survivor');
    const started: { attempt: number; progress: unknown; at: number }[] = [];
    b.handle(kind, async (job) => {
      started.push({ attempt: job.attempt, progress: job.progress, at: Date.now() });
    });
    const id = await enqueue(b, kind, {});
    // Claimed by an instance that then died: its lease runs out without being renewed.
    const leaseUntil = Date.now() + 800;
    await cypher(
      fx.app.runtime.db,
      `MATCH (j:Job {id: $id})
       SET j.status = 'running', j.lease_owner = 'crashed-instance', j.attempts = 1,
           j.lease_until = datetime({epochMillis: $until}), j.progress = '{"done":40}'`,
      { id, until: leaseUntil },
    );
    b.start();
    await eventually(
      () => b.get(id),
      (job) => job?.status === 'completed',
      5_000,
    );
    expect(started).to.have.length(1);
    expect(started[0]!.attempt).to.equal(2);
    expect(started[0]!.progress).to.deep.equal({ done: 40 });
    expect(started[0]!.at, 'not before the lease ran out').to.be.at.least(leaseUntil);
  });

  it('releases running work on shutdown, so another instance resumes it at once from its progress', async () => {
    const kind = `release-${Date.now()}`;
    const a = runner('stopping', { leaseMs: 60_000 });
    const b = runner('taking-over', { leaseMs: 60_000 });
    a.handle(kind, async (job) => {
      await job.reportProgress({ step: 3 });
      await new Promise<void>((_, reject) => {
        job.signal.addEventListener('abort', () => reject(new Error('interrupted')));
      });
    });
    const resumed: { attempt: number; progress: unknown }[] = [];
    b.handle(kind, async (job) => {
      resumed.push({ attempt: job.attempt, progress: job.progress });
    });
    const id = await enqueue(a, kind, {});
    a.start();
    await eventually(
      () => a.get(id),
      (job) => job?.status === 'running' && (job.progress as { step?: number } | null)?.step === 3,
      5_000,
    );
    await a.stop(1_000);
    const released = await a.get(id);
    expect(released).to.include({ status: 'pending', attempts: 0 });
    b.start();
    // The lease is a minute: only the release lets the other instance take it now.
    await eventually(
      () => b.get(id),
      (job) => job?.status === 'completed',
      3_000,
    );
    expect(resumed).to.deep.equal([{ attempt: 1, progress: { step: 3 } }]);
  });

  it('retries a failing job with back-off and marks it failed after its last attempt', async () => {
    const kind = `failing-${Date.now()}`;
    const a = runner('retrier');
    const attempts: number[] = [];
    a.handle(kind, async (job) => {
      attempts.push(job.attempt);
      throw new Error(`boom ${job.attempt}`);
    });
    const id = await enqueue(a, kind, {}, 3);
    a.start();
    const { value } = await eventually(
      () => a.get(id),
      (job) => job?.status === 'failed',
      5_000,
    );
    expect(attempts).to.deep.equal([1, 2, 3]);
    expect(value).to.include({ attempts: 3, error: 'boom 3' });
  });

  it('runs a cluster-wide task once per period across instances, never twice at once', async () => {
    const name = `cluster-${Date.now()}`;
    const periodMs = 300;
    const runs: { instance: string; start: number; end: number }[] = [];
    for (const instance of ['one', 'two', 'three']) {
      runner(instance).every({
        name,
        scope: 'cluster',
        everyMs: periodMs,
        run: async () => {
          const start = Date.now();
          // A run that lasts, so that another starting meanwhile would overlap it: the length of
          // the run is the behaviour here, nothing is waited for.
          await new Promise((r) => setTimeout(r, 30));
          runs.push({ instance, start, end: Date.now() });
        },
      });
    }
    runners.forEach((r) => r.start());
    await eventually(
      async () => runs.length,
      (n) => n >= 5,
      20_000,
    );
    await Promise.all(runners.splice(0).map((r) => r.stop(500)));
    // Three instances each running it would start about three runs per period.
    const sorted = [...runs].sort((x, y) => x.start - y.start);
    for (let i = 1; i < sorted.length; i += 1) {
      expect(sorted[i]!.start, 'a run starts after the previous one ended').to.be.at.least(
        sorted[i - 1]!.end,
      );
      expect(sorted[i]!.start - sorted[i - 1]!.start, 'and a period after it started').to.be.at.least(
        periodMs - 5,
      );
    }
  });

  it('gives back a cluster-wide run its instance stopped, as due and without an error', async () => {
    const name = `stopped-${Date.now()}`;
    // A period of a minute: only the release lets the second instance run it now.
    const task = (instance: string, runs: string[]) => ({
      name,
      scope: 'cluster' as const,
      everyMs: 60_000,
      run: async (signal: AbortSignal) => {
        runs.push(instance);
        if (instance === 'first') {
          await aborted(signal);
          throw signal.reason;
        }
      },
    });
    const runs: string[] = [];
    const a = runner('first', { leaseMs: 60_000 });
    a.every(task('first', runs));
    a.start();
    await until('the first run', () => runs.length === 1, 5_000);
    await a.stop(1_000);
    const [held] = await cypher(
      fx.app.runtime.db,
      `MATCH (s:Schedule {name: $name})
       RETURN s.lease_owner AS owner, s.last_error AS error, s.last_run_at AS lastRun`,
      { name },
    );
    expect(held).to.deep.equal({ owner: null, error: null, lastRun: null });
    const b = runner('second', { leaseMs: 60_000 });
    b.every(task('second', runs));
    b.start();
    await until('the run given back to be taken', () => runs.length === 2, 5_000);
    expect(runs).to.deep.equal(['first', 'second']);
  });

  it('runs an instance task on every instance', async () => {
    const seen = new Set<string>();
    for (const instance of ['left', 'right']) {
      runner(instance).every({
        name: 'local-cache',
        scope: 'instance',
        everyMs: 100,
        run: async () => {
          seen.add(instance);
        },
      });
    }
    runners.forEach((r) => r.start());
    await eventually(
      async () => seen.size,
      (size) => size === 2,
      2_000,
    );
  });

  it('leaves jobs and background tasks to the background process where it does not do that work', async () => {
    const kind = `elsewhere-${Date.now()}`;
    const ran: string[] = [];
    let told = 0;
    const serving = runner('serving-only', { background: false, queued: () => (told += 1) });
    const background = runner('background', { pollMs: 60_000 });
    for (const [r, name] of [
      [serving, 'serving-only'],
      [background, 'background'],
    ] as const) {
      r.handle(kind, async () => {
        ran.push(`job@${name}`);
      });
      for (const scope of ['process', 'instance', 'cluster'] as const) {
        r.every({
          name: `${scope}-${kind}`,
          scope,
          everyMs: 50,
          run: async () => {
            if (!ran.includes(`${scope}@${name}`)) ran.push(`${scope}@${name}`);
          },
        });
      }
    }
    runners.forEach((r) => r.start());
    // Queued by the serving process: it is told, and the background one, woken, runs the job.
    await enqueue(serving, kind, null);
    expect(told).to.equal(1);
    background.wake();
    await until('the job ran', () => ran.includes('job@background'), 5_000);
    await until('every task ran', () => ran.filter((r) => !r.startsWith('job')).length >= 4, 2_000);
    expect(ran.filter((r) => r.endsWith('@serving-only')).sort()).to.deep.equal(['process@serving-only']);
    expect(ran.filter((r) => r.endsWith('@background')).sort()).to.deep.equal([
      'cluster@background',
      'instance@background',
      'job@background',
      'process@background',
    ]);
  });
});
