import type { Database } from '../../src/db/database.js';
import { cypher } from './db.js';
import type { HttpClient } from './http.js';

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Probes until `accept` holds or `timeoutMs` passes; returns the accepted value and how long it
 * took, or throws with the last value seen.
 */
export async function eventually<T>(
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs: number,
  intervalMs = 25,
): Promise<{ value: T; elapsedMs: number }> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    const elapsedMs = Date.now() - started;
    if (accept(value)) return { value, elapsedMs };
    if (elapsedMs > timeoutMs) {
      throw new Error(`not reached within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    }
    await pause(intervalMs);
  }
}

/** Checks until `check` holds, or throws naming `what` once `timeoutMs` has passed. */
export async function until(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs = 10_000,
  intervalMs = 25,
): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await pause(intervalMs);
  }
}

/**
 * Waits until the clock reads later than `iso` (a timestamp the service wrote), so that whatever
 * the service does next bears a later one.
 */
export async function clockPast(iso: string): Promise<void> {
  const at = Date.parse(iso);
  await until(`the clock to pass ${iso}`, () => Date.now() > at, 1_000, 1);
}

/**
 * Waits until the periodic task `name` (one that runs once across instances: a `(:Schedule)`
 * node) has started `runs` runs after this call, each one found in the database: what a test
 * waits for when it must see that a sweep, run again, changes nothing.
 */
export async function scheduledRuns(
  db: Database,
  name: string,
  runs: number,
  timeoutMs = 30_000,
): Promise<void> {
  let after = new Date().toISOString();
  for (let run = 0; run < runs; run += 1) {
    const { value } = await eventually(
      async () => {
        const [row] = await cypher(
          db,
          'MATCH (s:Schedule {name: $name}) RETURN toString(s.last_run_at) AS at',
          {
            name,
          },
        );
        const at = row?.['at'];
        return typeof at === 'string' ? at : '';
      },
      (at) => at !== '' && Date.parse(at) > Date.parse(after),
      timeoutMs,
      50,
    );
    after = value;
  }
}

/**
 * One series of the instance behind `http`'s /metrics, by its name and labels as printed
 * (`name{label="value"}`), or `absent` when it is not there.
 */
export async function metricValue(http: HttpClient, series: string, absent = NaN): Promise<number> {
  const text = (await http.get('/metrics')).text;
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? absent : Number(line.slice(series.length + 1));
}

/** How many runs of its periodic task `task` the instance behind `http` has finished (its /metrics). */
export const taskRuns = (http: HttpClient, task: string): Promise<number> =>
  metricValue(http, `background_task_runs_total{task="${task}"}`, 0);

/**
 * Waits until every instance (by its client) has finished `runs` runs of its own periodic task
 * `task` (one that each instance runs: webhooks.dispatch, risk.privileges) begun after this call:
 * what a test waits for when it must see that the instance, looking again, does nothing more.
 */
export async function instanceRuns(
  instances: HttpClient[],
  task: string,
  runs: number,
  timeoutMs = 30_000,
): Promise<void> {
  const from = await Promise.all(instances.map((http) => taskRuns(http, task)));
  // A run under way now began before this call; it is counted when it ends, so one more.
  await until(
    `${runs} runs of ${task} on every instance`,
    async () => {
      const now = await Promise.all(instances.map((http) => taskRuns(http, task)));
      return now.every((n, i) => n >= from[i]! + runs + 1);
    },
    timeoutMs,
    50,
  );
}
