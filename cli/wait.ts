/**
 * Waiting between polls, and stopping a wait when the user presses Ctrl-C: the first SIGINT (or
 * SIGTERM) ends the wait so that the command can finish what it prints; a second one ends the
 * process at once, as it would without the command listening.
 */

/** The exit code of a command stopped by an interrupt, as shells report one. */
export const INTERRUPTED = 130;

/** Resolves after `ms`, or as soon as `signal` is aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

export interface Interrupt {
  /** Aborted at the first SIGINT or SIGTERM. */
  signal: AbortSignal;
  /** Stops listening: the signals have their default effect again. */
  dispose(): void;
}

export function stopOnInterrupt(): Interrupt {
  const controller = new AbortController();
  const onSignal = (name: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      dispose();
      process.kill(process.pid, name);
      return;
    }
    process.exitCode = INTERRUPTED;
    controller.abort();
  };
  const dispose = (): void => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return { signal: controller.signal, dispose };
}
