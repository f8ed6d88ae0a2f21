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
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
