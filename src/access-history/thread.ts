import type { ThreadModule } from '../decisions/decision-thread.js';

/** The decision thread that computes access changes on its replica (./thread-worker.ts). */
export const ACCESS_HISTORY_THREAD: ThreadModule = { here: import.meta.url, name: 'thread-worker' };
