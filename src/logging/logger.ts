import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * Paths that are never written to the log, whatever object they appear in. Request bodies and
 * Cypher parameters are not logged at all; this list is the second line of defence.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["proxy-authorization"]',
  'res.headers["set-cookie"]',
  '*.authorization',
  '*.password',
  '*.secret',
  '*.client_secret',
  '*.secret_hash',
  '*.token',
  '*.access_token',
  '*.refresh_token',
  '*.private_key',
  'password',
  'secret',
  'client_secret',
  'token',
  'access_token',
  'refresh_token',
];

const OPTIONS = {
  base: { service: 'principals-access-service' },
  timestamp: pino.stdTimeFunctions.isoTime,
  formatters: { level: (label: string) => ({ level: label }) },
};

/**
 * The service's logger. By default it writes to standard output asynchronously: lines written
 * while a write is under way go out together in the next one, so a busy instance does not pay a
 * system call per request. Call `flush` before exiting.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    { ...OPTIONS, level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/**
 * A logger for the one line each request ends with, writing where `logger` writes, at its level,
 * in its format, but without the redaction pass: that line holds only fields the HTTP edge picks
 * (method, path without query, route, address, user agent, status, sizes, client id, timing),
 * never a header value or a body, and redaction is most of its cost on a busy decision endpoint.
 */
export function createAccessLogger(logger: Logger): Logger {
  const destination = (logger as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym];
  return pino({ ...OPTIONS, level: logger.level }, destination);
}
