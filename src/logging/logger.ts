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

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'principals-access-service' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}
