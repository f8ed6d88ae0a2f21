import type { PeriodicTask } from '../jobs/runner.js';
import type { ChangeFeed } from './feed.js';

/** Each instance reads the change feed's new events at this pace (besides Redis's nudges). */
export function feedTasks(feed: ChangeFeed, every: { pollMs: number }): PeriodicTask[] {
  return [{ name: 'events.poll', scope: 'process', everyMs: every.pollMs, run: () => feed.poll() }];
}
