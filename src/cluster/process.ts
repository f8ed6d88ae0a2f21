import cluster from 'node:cluster';
import type { Registry } from 'prom-client';

/** Where the primary tells a process which of its host's processes it is (0, 1, 2, …). */
export const SLOT_ENV = 'PAS_PROCESS_SLOT';
/** Where the primary tells a process what it does (`ProcessPart`). */
export const PART_ENV = 'PAS_PROCESS_PART';

/**
 * What a process of a host does: `serving` answers requests and does the background work too
 * (the host has no background process); `serving-only` answers requests and leaves the
 * background work to the host's `background` process, which answers none.
 */
export type ProcessPart = 'serving' | 'serving-only' | 'background';

/** The slot of the host's background process; serving processes are 1, 2, …. */
export const BACKGROUND_SLOT = 0;

/** One process's metrics as its registry reads them (`getMetricsAsJSON`), as they cross to the primary. */
export type ProcessMetrics = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** What the primary and its processes tell each other. */
export type ProcessMessage =
  | { channel: 'pas'; type: 'ready' }
  | { channel: 'pas'; type: 'stop' }
  /** A serving process queued a job due now: the primary passes it on to the background process. */
  | { channel: 'pas'; type: 'job-queued' }
  /**
   * A serving process's longest event-loop delay of the last moment (ms): the primary passes it
   * on to the background process, naming the slot, for the pacing of background work (src/pacing).
   */
  | { channel: 'pas'; type: 'loop-delay'; delayMs: number; slot?: number }
  /**
   * Changes a process committed (the change feed's message, JSON), where no Redis carries them:
   * the primary passes them on to the host's other processes, which hear them at once.
   */
  | { channel: 'pas'; type: 'changes'; text: string }
  /** The primary, scraped on METRICS_PORT, asks each process for its metrics… */
  | { channel: 'pas'; type: 'metrics-request'; id: number }
  /** …and each answers with what its registry reads. */
  | { channel: 'pas'; type: 'metrics'; id: number; metrics: ProcessMetrics };

export function isProcessMessage(message: unknown): message is ProcessMessage {
  return (
    typeof message === 'object' && message !== null && (message as { channel?: unknown }).channel === 'pas'
  );
}

/** What this process is among its host's processes. */
export interface ProcessRole {
  /** Its slot: 1 when it serves alone, 0 for a background process. */
  slot: number;
  /** Whether it answers requests. */
  serves: boolean;
  /**
   * Whether it follows risk through the change feed, writes the index snapshot and computes the
   * access history: work the host's other processes would only repeat.
   */
  leads: boolean;
  /** Whether it runs queued jobs (syncs, reports), lease tasks and webhook deliveries. */
  background: boolean;
}

/** This process's role, from what its primary told it (a process on its own does everything). */
export function processRole(): ProcessRole {
  if (!cluster.isWorker) return { slot: 1, serves: true, leads: true, background: true };
  const slot = Number(process.env[SLOT_ENV]);
  const part = process.env[PART_ENV] as ProcessPart | undefined;
  if (part === 'background') return { slot: BACKGROUND_SLOT, serves: false, leads: true, background: true };
  const at = Number.isInteger(slot) && slot >= 1 ? slot : 1;
  if (part === 'serving-only') return { slot: at, serves: true, leads: false, background: false };
  return { slot: at, serves: true, leads: at === 1, background: true };
}

/** This process's slot among its host's processes: 1 when it serves alone. */
export function processSlot(): number {
  return processRole().slot;
}

/** Tells the primary, if there is one, that this process is ready. */
export function announceReady(): void {
  tellPrimary({ channel: 'pas', type: 'ready' });
}

/** Tells the primary, if there is one, that this process queued a job due now. */
export function announceJobQueued(): void {
  tellPrimary({ channel: 'pas', type: 'job-queued' });
}

/** Tells the primary, if there is one, how long this serving process's event loop was held up. */
export function announceLoopDelay(delayMs: number): void {
  tellPrimary({ channel: 'pas', type: 'loop-delay', delayMs });
}

function tellPrimary(message: ProcessMessage): void {
  if (cluster.isWorker) process.send?.(message);
}

/**
 * Calls `stop` when the primary asks this process to stop, or goes away without asking (its
 * process was killed): a process never outlives its primary.
 */
export function onPrimaryStop(stop: () => void): void {
  if (!cluster.isWorker) return;
  process.on('message', (message: unknown) => {
    if (isProcessMessage(message) && message.type === 'stop') stop();
  });
  process.on('disconnect', stop);
}

/** Answers the primary's requests for this process's metrics (METRICS_PORT) with what `read` gives. */
export function onMetricsRequest(read: () => Promise<ProcessMetrics>): void {
  if (!cluster.isWorker) return;
  process.on('message', (message: unknown) => {
    if (!isProcessMessage(message) || message.type !== 'metrics-request') return;
    const { id } = message;
    // A failed read still answers, with nothing, so that the scrape does not wait for this process.
    void read()
      .catch((): ProcessMetrics => [])
      .then((metrics) => tellPrimary({ channel: 'pas', type: 'metrics', id, metrics }));
  });
}

/** Calls `wake` when the primary passes on that a serving process queued a job. */
export function onJobQueued(wake: () => void): void {
  if (!cluster.isWorker) return;
  process.on('message', (message: unknown) => {
    if (isProcessMessage(message) && message.type === 'job-queued') wake();
  });
}

/** Tells the primary, if there is one, of changes this process committed (src/events/feed.ts). */
export function announceChanges(text: string): void {
  tellPrimary({ channel: 'pas', type: 'changes', text });
}

/** Calls `take` with the changes the host's other processes committed, as the primary passes them on. */
export function onChanges(take: (text: string) => void): void {
  if (!cluster.isWorker) return;
  process.on('message', (message: unknown) => {
    if (isProcessMessage(message) && message.type === 'changes') take(message.text);
  });
}

/** Calls `take` with each serving process's loop delay the primary passes on (a background process). */
export function onLoopDelay(take: (slot: number, delayMs: number) => void): void {
  if (!cluster.isWorker) return;
  process.on('message', (message: unknown) => {
    if (isProcessMessage(message) && message.type === 'loop-delay') take(message.slot ?? 0, message.delayMs);
  });
}
