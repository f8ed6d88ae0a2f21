/** RFC 3339 UTC with milliseconds and `Z`, the one timestamp format of the API. */
export function nowIso(): string {
  return new Date().toISOString();
}

/** Normalises any RFC 3339 timestamp (offsets, fractional seconds) to the API's format. */
export function toIso(value: string | Date): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}
