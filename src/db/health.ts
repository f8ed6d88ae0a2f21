import type { Logger } from '../logging/logger.js';

/**
 * Whether the database answers. Once a unit of work fails for lack of a connection the service
 * stops sending queries (requests get 503 at once instead of waiting on timeouts) and probes in
 * the background until the database is back, then resumes by itself.
 */
export class DbHealth {
  private up = true;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly check: () => Promise<void>,
    private readonly logger: Logger,
    private readonly onChange: (up: boolean) => void,
    private readonly probeIntervalMs = 1000,
  ) {
    onChange(true);
  }

  get isUp(): boolean {
    return this.up;
  }

  markDown(reason: unknown): void {
    if (!this.up || this.stopped) return;
    this.up = false;
    this.onChange(false);
    this.logger.warn({ err: reason }, 'database unreachable; probing until it returns');
    this.schedule();
  }

  /** Checks now; updates the state either way. */
  async probe(): Promise<boolean> {
    try {
      await this.check();
      if (!this.up) {
        this.up = true;
        this.onChange(true);
        this.logger.info('database reachable again');
      }
      return true;
    } catch (err) {
      this.markDown(err);
      return false;
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.probe().then((ok) => {
        if (!ok) this.schedule();
      });
    }, this.probeIntervalMs);
    this.timer.unref();
  }
}
