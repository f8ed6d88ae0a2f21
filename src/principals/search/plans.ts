import type { Reader } from '../../db/database.js';
import type { Logger } from '../../logging/logger.js';
import type { ShapedStatement } from './shaped.js';
import { principalRepository as repo } from '../repository.js';

export interface SearchPlanOptions {
  /** Shapes that may be planned per minute (the budget of planning work callers can cause). */
  perMinute: number;
  /** Shapes remembered as planned; kept below Neo4j's own plan cache (1,000 by default). */
  capacity: number;
  logger: Logger;
}

/**
 * Which search shapes run a statement of their own. A statement written for a shape is the
 * fastest way to answer it, but each new shape costs Neo4j a plan (from a tenth of a second to
 * seconds as conditions add up), so a shape earns one by coming back: seen a second time, it is
 * planned in the background, within a budget per minute, and runs its own statement once
 * planned. No request waits for a plan, one-off combinations are never planned, and no caller
 * can buy more planning than the budget. Until then a search runs the generic statement, whose
 * one plan serves every combination.
 */
export class SearchPlans {
  /** Planned shapes, least recently used first. */
  private readonly planned = new Map<string, true>();
  /** Shapes seen once and not planned, oldest first. */
  private readonly sighted = new Map<string, true>();
  private readonly queued = new Set<string>();
  private readonly queue: { statement: ShapedStatement }[] = [];
  private tokens: number;
  private refilledAt = Date.now();
  /** While shapes are being planned: settles once the queue is drained. */
  private planning: Promise<void> | undefined;

  constructor(
    private readonly db: Reader,
    private readonly options: SearchPlanOptions,
  ) {
    this.tokens = options.perMinute;
  }

  /**
   * Whether this shape's statement may answer now; when it may not yet and the shape comes back,
   * it is planned in the background if the budget allows.
   */
  ready(statement: ShapedStatement): boolean {
    const key = statement.text;
    if (this.planned.has(key)) {
      this.planned.delete(key);
      this.planned.set(key, true);
      return true;
    }
    if (!this.sighted.has(key)) {
      this.sighted.set(key, true);
      if (this.sighted.size > this.options.capacity * 4)
        this.sighted.delete(this.sighted.keys().next().value!);
      return false;
    }
    if (!this.queued.has(key) && this.take()) {
      this.sighted.delete(key);
      this.queued.add(key);
      this.queue.push({ statement });
      void this.work();
    }
    return false;
  }

  /** How many shapes are planned (for tests and metrics). */
  get size(): number {
    return this.planned.size;
  }

  /**
   * Resolves once nothing is queued or being planned: every plan asked for so far has been made
   * (or has failed). For tests, which need to know the background work has had its chance.
   */
  async settled(): Promise<void> {
    while (this.planning) await this.planning;
  }

  private take(): boolean {
    const now = Date.now();
    const perMinute = this.options.perMinute;
    this.tokens = Math.min(perMinute, this.tokens + ((now - this.refilledAt) / 60_000) * perMinute);
    this.refilledAt = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Plans queued shapes one at a time, by running each once (a read, off the request path). */
  private async work(): Promise<void> {
    if (this.planning) return;
    let drained!: () => void;
    this.planning = new Promise((resolve) => (drained = resolve));
    try {
      for (let next = this.queue.shift(); next; next = this.queue.shift()) {
        const { statement } = next;
        try {
          await repo.planSearch(this.db, statement);
          this.planned.set(statement.text, true);
          if (this.planned.size > this.options.capacity) {
            this.planned.delete(this.planned.keys().next().value!);
          }
        } catch (err) {
          this.options.logger.warn({ err }, 'could not plan a search shape; the generic statement serves it');
        } finally {
          this.queued.delete(statement.text);
        }
      }
    } finally {
      this.planning = undefined;
      drained();
    }
  }
}
