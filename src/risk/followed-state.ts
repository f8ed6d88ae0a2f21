import type { Database } from '../db/database.js';
import type { Logger } from '../logging/logger.js';

/** Principals checked per transaction. */
export const BATCH = 500;

/**
 * A risk factor kept in step with the change feed: what changes is noted under two kinds of key
 * (`onChange` of the subclass fills `first` and `second`), and each run checks the principals
 * they touch, a batch per transaction, every principal that may carry the factor once at start.
 * A run that fails puts back what it took, so nothing is lost: the next run looks again.
 */
export abstract class FollowedState {
  protected first = new Set<string>();
  protected second = new Set<string>();
  private everyone = true;

  constructor(
    protected readonly db: Database,
    private readonly logger: Logger,
    /** Said in the log line of a run that wrote something. */
    private readonly what: string,
  ) {}

  /** The principals that may carry the factor, by id, after `after`: the check at start. */
  protected abstract page(after: string, limit: number): Promise<string[]>;

  /** Checks one batch of keys and writes what changed; answers how many principals it wrote. */
  protected abstract check(first: string[], second: string[]): Promise<number>;

  async refresh(): Promise<number> {
    const everyone = this.everyone;
    const first = [...this.first];
    const second = [...this.second];
    this.everyone = false;
    this.first = new Set();
    this.second = new Set();
    try {
      let written = 0;
      if (everyone) {
        for (let after = ''; ;) {
          const page = await this.page(after, BATCH);
          if (page.length > 0) written += await this.check(page, []);
          if (page.length < BATCH) break;
          after = page[page.length - 1]!;
        }
      }
      for (let i = 0; i < Math.max(first.length, second.length); i += BATCH) {
        written += await this.check(first.slice(i, i + BATCH), second.slice(i, i + BATCH));
      }
      if (written > 0) this.logger.info({ principals: written }, `${this.what} updated`);
      return written;
    } catch (err) {
      if (everyone) this.everyone = true;
      for (const key of first) this.first.add(key);
      for (const key of second) this.second.add(key);
      throw err;
    }
  }
}
