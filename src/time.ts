let lastMs = -1;
let lastText = '';

/**
 * RFC 3339 UTC with milliseconds and `Z`, the one timestamp format of the API. Made once per
 * millisecond: a busy decision endpoint stamps many answers (and log lines) within each.
 */
export function nowIso(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastText = new Date(ms).toISOString();
  }
  return lastText;
}

const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/**
 * The one parser of timestamps a caller sends (every time parameter and every time operand).
 * An RFC 3339 timestamp becomes the same instant in UTC (`...Z`), keeping sub-millisecond digits;
 * anything that is not a real instant gives undefined: no leap second (Neo4j has none), at most
 * nine fraction digits (its precision), `T` between date and time, a real calendar date. Neo4j's
 * own parser therefore never sees text it would reject, and `+02:00` and `Z` compare alike.
 */
export function parseInstant(text: string): string | undefined {
  const m = INSTANT.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const fraction = m[7];
  const sign = m[8] === '-' ? -1 : 1;
  const offsetHours = Number(m[9] ?? 0);
  const offsetMinutes = Number(m[10] ?? 0);
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const daysIn = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn[month - 1]!) return undefined;
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  const utc = new Date(date.getTime() - sign * (offsetHours * 60 + offsetMinutes) * 60_000).toISOString();
  if (!/^\d{4}-/.test(utc)) return undefined;
  return `${utc.slice(0, 19)}${fraction ? `.${fraction}` : ''}Z`;
}

/**
 * An instant as text that sorts in time order: the normalised form of `parseInstant` with the
 * fraction padded to nanoseconds. Undefined for text that is not a real instant.
 */
export function instantKey(text: string): string | undefined {
  const normal = parseInstant(text);
  if (normal === undefined) return undefined;
  const [whole = normal, fraction = ''] = normal.slice(0, -1).split('.');
  return `${whole}.${fraction.padEnd(9, '0')}`;
}

/**
 * Turns for long computations on the event loop: call the function it returns as often as
 * convenient; once `sliceMs` has passed since the last turn it answers a promise that resolves
 * after the event loop has served what waits (requests, timers), else undefined, so that a
 * computation of seconds holds other requests up by one slice at most.
 */
export function timeSlices(sliceMs = 2): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < sliceMs) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        since = performance.now();
        resolve();
      }),
    );
  };
}

/**
 * What `work` settles with, or, if `ms` pass first, what `late` returns (or throws): the one way
 * to bound a wait. The work itself goes on; its outcome is then ignored.
 */
export function within<T, L>(work: Promise<T>, ms: number, late: () => L): Promise<T | L> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<L>((resolve) => {
    timer = setTimeout(() => resolve(Promise.resolve().then(late)), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
