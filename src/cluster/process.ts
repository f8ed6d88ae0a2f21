import cluster from 'node:cluster';

/** Where the primary tells a serving process which of its host's processes it is (1, 2, …). */
export const SLOT_ENV = 'PAS_PROCESS_SLOT';

/** What the primary and its serving processes tell each other. */
export type ProcessMessage = { channel: 'pas'; type: 'ready' } | { channel: 'pas'; type: 'stop' };

export function isProcessMessage(message: unknown): message is ProcessMessage {
  return (
    typeof message === 'object' && message !== null && (message as { channel?: unknown }).channel === 'pas'
  );
}

/** This process's slot among its host's serving processes: 1 when it serves alone. */
export function processSlot(): number {
  if (!cluster.isWorker) return 1;
  const slot = Number(process.env[SLOT_ENV]);
  return Number.isInteger(slot) && slot >= 1 ? slot : 1;
}

/** Tells the primary, if there is one, that this process serves. */
export function announceReady(): void {
  if (cluster.isWorker) process.send?.({ channel: 'pas', type: 'ready' } satisfies ProcessMessage);
}

/**
 * Calls `stop` when the primary asks this process to stop, or goes away without asking (its
 * process was killed): a serving process never outlives its primary.
 */
export function onPrimaryStop(stop: () => void): void {
  if (!cluster.isWorker) return;
  process.on('message', (message: unknown) => {
    if (isProcessMessage(message) && message.type === 'stop') stop();
  });
  process.on('disconnect', stop);
}
