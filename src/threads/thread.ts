import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * A worker thread running the module `name` beside `here` (the calling module's URL). Compiled,
 * the module is JavaScript. Run from the TypeScript sources (tests, the development server), it is
 * TypeScript, which a worker does not load by itself: a bootstrap registers the same loader in it
 * first.
 */
export function workerThread(here: string, name: string, workerData: unknown): Worker {
  if (!here.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, here), { workerData });
  const file = new URL(`./${name}.ts`, here).href;
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(file)}); })`;
  return new Worker(bootstrap, { eval: true, workerData });
}

/** The thread a task was on stopped before answering it. */
export class ThreadLost extends Error {}

/**
 * How much lower than the serving thread a background thread runs (a nice value): where the cores
 * are all busy, the scheduler gives the thread answering single decisions about nine tenths of a
 * core they share, and a busy background thread the rest.
 */
export const BACKGROUND_NICENESS = 10;

/**
 * Lowers the priority of the calling thread alone (Linux schedules threads one by one and names
 * the calling one in /proc/thread-self): for a worker thread whose work no request waits on
 * directly, or waits on as a whole (a batch), so that it never takes a core from the event loop.
 * Elsewhere, or where it is refused, the thread keeps the process's priority.
 */
export function runInBackground(): void {
  try {
    const link = readlinkSync('/proc/thread-self');
    const tid = Number(link.slice(link.lastIndexOf('/') + 1));
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, BACKGROUND_NICENESS);
  } catch {
    // Not Linux, or not allowed: the same priority as the rest of the process.
  }
}

/**
 * Lowers the priority of the whole process, every thread it has now and (since a thread starts
 * with its creator's) every one it makes later: for a process no request waits on (the background
 * process of src/cluster), so that where the cores are all busy the serving processes get them.
 */
export function runProcessInBackground(): void {
  lowerProcessPriority(process.pid, BACKGROUND_NICENESS);
}

/**
 * Gives every thread process `pid` has now the nice value `niceness` (Linux schedules threads one
 * by one: /proc/<pid>/task lists them); a thread it makes later starts with its creator's. Where
 * threads cannot be listed (not Linux), the process as a whole. A thread that ended meanwhile, or
 * a change not allowed, is left as it is.
 */
export function lowerProcessPriority(pid: number, niceness: number): void {
  let threads: number[];
  try {
    threads = readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {
    threads = [pid];
  }
  for (const tid of threads) {
    try {
      setPriority(tid, niceness);
    } catch {
      // Gone, or not allowed: it keeps the priority it has.
    }
  }
}

/** How the scheduler has treated a thread since it started, in seconds. */
export interface ThreadSchedule {
  /** On a core. */
  running: number;
  /** Ready to run, waiting for a core (taken by other threads or processes). */
  waiting: number;
}

/**
 * How the scheduler has treated the calling process's main thread, the one that runs its event
 * loop (Linux: /proc/self/schedstat names that thread's time on a core and time ready but
 * waiting, in nanoseconds); undefined elsewhere. A thread kept waiting for a core cannot answer
 * the requests it holds, and its timers barely notice: what a host short of cores shows here is
 * missing from the event-loop delay.
 */
export function mainThreadSchedule(): ThreadSchedule | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/self/schedstat', 'latin1');
  } catch {
    return undefined;
  }
  const [running, waiting] = text.split(' ').map(Number);
  if (!Number.isFinite(running) || !Number.isFinite(waiting)) return undefined;
  return { running: running! / 1e9, waiting: waiting! / 1e9 };
}
