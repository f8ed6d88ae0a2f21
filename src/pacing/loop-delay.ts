import { PACING_TICK_MS } from './pacer.js';

/** How often the loop's lateness is sampled. */
const SAMPLE_MS = 10;

/**
 * Measures this process's event loop: every PACING_TICK_MS, `tell` gets the longest delay (ms)
 * past its due time that a timer of the loop saw since the last call. A serving process that
 * cannot run when its requests arrive (the cores taken by Neo4j or by background work, or its own
 * long task) sees its timers fire late. A delay while no request was served harms nobody: given
 * `served` (requests begun, ever), a moment without one says 0.
 */
export class LoopDelay {
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly tell: (delayMs: number) => void,
    private readonly served?: () => number,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    let worst = 0;
    let windowStart = performance.now();
    let servedBefore = this.served?.();
    const sample = (due: number): void => {
      const now = performance.now();
      worst = Math.max(worst, now - due);
      if (now - windowStart >= PACING_TICK_MS) {
        const served = this.served?.();
        this.tell(served === servedBefore && served !== undefined ? 0 : worst);
        servedBefore = served;
        worst = 0;
        windowStart = now;
      }
      if (!this.running) return;
      this.timer = setTimeout(sample, SAMPLE_MS, now + SAMPLE_MS);
      this.timer.unref();
    };
    this.timer = setTimeout(sample, SAMPLE_MS, windowStart + SAMPLE_MS);
    this.timer.unref();
  }

  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
