/**
 * Background work that gives way to decisions. A connector's sync, a report or the privilege-risk
 * refresh commits one transaction after another as fast as Neo4j takes them; on a host where
 * Neo4j and the serving processes share the cores, each of those transactions takes cores that
 * decisions are waiting for. The pacer runs such work in steps and, after each, pauses in
 * proportion to it: the step's share of time (its duty) falls by half whenever a serving process's
 * event loop was held up for longer than the threshold in the last moment, and rises again slowly
 * while none was (additive increase, multiplicative decrease). Quiet serving processes leave the
 * work at full speed; busy ones slow it down to a floor that still finishes it.
 */

/** How often the duty is brought up to date from what the serving processes last said. */
export const PACING_TICK_MS = 200;
/** A serving process's report older than this is no longer taken into account. */
const REPORT_FRESH_MS = 3 * PACING_TICK_MS;
/** The lowest share of time the work is given, so that it always finishes. */
export const MIN_DUTY = 0.05;
/** What the duty gains per calm tick: from the floor to full speed in about ten seconds. */
const DUTY_STEP = 0.02;
/** The longest pause after one step, whatever it took. */
const MAX_PAUSE_MS = 5_000;
/**
 * Work that starts after this long without a step starts small: its first step takes the least,
 * each calm step after it twice as much, up to the most (a step's size is decided before the
 * serving processes can say how it held them up).
 */
const IDLE_MS = 1_000;
const FIRST_SHARE = 0.1;

export interface PacerOptions {
  /** Off: work runs at full speed whatever the serving processes say. */
  enabled: boolean;
  /** The event-loop delay of a serving process, in ms, above which decisions are taken to suffer. */
  delayMs: number;
  now?: () => number;
  /** Waits `ms`, or less once `signal` aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Told the duty whenever it changes, and each pause as it starts. */
  observe?: { duty(duty: number): void; paused(ms: number, work: string): void };
}

function sleepFor(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

export class Pacer {
  private dutyNow = 1;
  /** The share of the most a step may take while the work ramps up after a pause. */
  private ramp = FIRST_SHARE;
  private lastStepAt = -Infinity;
  /** The latest event-loop delay each serving process reported, and when. */
  private readonly reports = new Map<string, { delayMs: number; at: number }>();
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(private readonly options: PacerOptions) {
    this.now = options.now ?? (() => performance.now());
    this.sleep = options.sleep ?? sleepFor;
  }

  /** The share of time the paced work gets now, from MIN_DUTY to 1. */
  get duty(): number {
    return this.dutyNow;
  }

  /** Brings the duty up to date every PACING_TICK_MS until `stop`. */
  start(): void {
    if (this.timer || !this.options.enabled) return;
    this.timer = setInterval(() => this.tick(), PACING_TICK_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** What a serving process (`source`) measured: its longest event-loop delay of the last moment. */
  report(source: string, delayMs: number): void {
    this.reports.set(source, { delayMs, at: this.now() });
  }

  /**
   * One step of the duty: halved if a fresh report exceeds the threshold, else raised a little.
   * Called by the timer; public so that a test can drive it.
   */
  tick(): void {
    const now = this.now();
    let worst = 0;
    for (const [source, { delayMs, at }] of this.reports) {
      if (now - at > REPORT_FRESH_MS) this.reports.delete(source);
      else worst = Math.max(worst, delayMs);
    }
    const next =
      worst > this.options.delayMs
        ? Math.max(MIN_DUTY, this.dutyNow / 2)
        : Math.min(1, this.dutyNow + DUTY_STEP);
    if (next !== this.dutyNow) {
      this.dutyNow = next;
      this.options.observe?.duty(next);
    }
  }

  /**
   * Runs one step of background work (`what` names it in the metrics), then pauses so that it has
   * had `duty` of the time since it began; the pause ends early once `signal` aborts (the work is
   * being stopped). A step that fails is not followed by a pause.
   */
  async step<T>(what: string, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (!this.options.enabled) return work();
    const started = this.now();
    const result = await work();
    this.lastStepAt = this.now();
    this.ramp = Math.min(1, this.ramp * 2);
    const duty = this.dutyNow;
    if (duty < 1) {
      const pause = Math.min(MAX_PAUSE_MS, (this.now() - started) * (1 / duty - 1));
      this.options.observe?.paused(pause, what);
      await this.sleep(pause, signal);
    }
    return result;
  }

  /**
   * How many items the next step should take, given `most` at full speed: fewer, down to `least`,
   * while the work is slowed, so that each step holds the database for less time; and fewer while
   * work that has just started ramps up.
   */
  size(most: number, least: number): number {
    if (!this.options.enabled) return most;
    if (this.now() - this.lastStepAt > IDLE_MS) this.ramp = FIRST_SHARE;
    const share = Math.min(this.dutyNow, this.ramp);
    return Math.max(least, Math.min(most, Math.round(most * share)));
  }
}

/** A pacer that never slows anything down (work run outside the service's processes, tests). */
export const unpaced = (): Pacer => new Pacer({ enabled: false, delayMs: Infinity });
