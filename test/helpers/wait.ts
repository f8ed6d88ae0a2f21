const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Probes until `accept` holds or `timeoutMs` passes; returns the accepted value and how long it
 * took, or throws with the last value seen.
 */
export async function eventually<T>(
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs: number,
  intervalMs = 25,
): Promise<{ value: T; elapsedMs: number }> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    const elapsedMs = Date.now() - started;
    if (accept(value)) return { value, elapsedMs };
    if (elapsedMs > timeoutMs) {
      throw new Error(`not reached within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    }
    await pause(intervalMs);
  }
}

/** Checks until `check` holds, or throws naming `what` once `timeoutMs` has passed. */
export async function until(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs = 10_000,
  intervalMs = 25,
): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await pause(intervalMs);
  }
}

/**
 * Waits until the clock reads later than `iso` (a timestamp the service wrote), so that whatever
 * the service does next bears a later one.
 */
export async function clockPast(iso: string): Promise<void> {
  const at = Date.parse(iso);
  await until(`the clock to pass ${iso}`, () => Date.now() > at, 1_000, 1);
}
