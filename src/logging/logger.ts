import { pino, type Logger } from 'pino';
import { nowIso } from '../time.js';

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

/** Bytes of log lines gathered before they are written, and the longest a line waits for more. */
const LOG_BUFFER_BYTES = 4096;
const LOG_FLUSH_MS = 200;

/**
 * The service's logger. By default it writes to standard output asynchronously, a few kilobytes
 * at a time, and at least every 200 ms: a busy instance pays one system call for a dozen access
 * lines rather than one each (and a write handed to the thread pool each time), and a quiet one
 * still shows each line within a fifth of a second. Call `flush` before exiting.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  let stream = destination;
  if (!stream) {
    const out = pino.destination({ dest: 1, sync: false, minLength: LOG_BUFFER_BYTES });
    setInterval(() => out.flush(), LOG_FLUSH_MS).unref();
    stream = out;
  }
  return pino({ ...OPTIONS, level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, stream);
}

/** What the one line each request ends with says. */
export interface AccessEntry {
  request_id: string;
  method: string;
  /** Without the query string, which may carry secrets. */
  path: string;
  route: string;
  ip: string;
  user_agent: string | undefined;
  status: number;
  length: number | undefined;
  client_id: string | undefined;
  /** The trace the request belongs to, when the service traces. */
  trace_id?: string | undefined;
  duration_ms: number;
}

export type AccessLog = (entry: AccessEntry) => void;

const quote = JSON.stringify;

/**
 * The access log: one line per request, at `info` (`error` for a 5xx), written where `logger`
 * writes and in its format (the fields pino would write, in its order), but assembled here. The
 * line holds only fields the HTTP edge picks (method, path without query, route, address, user
 * agent, status, size, client id, timing), never a header value or a body, so it needs neither
 * pino's redaction pass nor its generic serialiser, which together cost more than the rest of a
 * decision's logging on the busiest endpoint.
 */
export function createAccessLog(logger: Logger): AccessLog {
  const destination = (logger as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym]!;
  const info = logger.isLevelEnabled('info');
  const error = logger.isLevelEnabled('error');
  const service = quote(OPTIONS.base.service);
  return (e) => {
    const level = e.status >= 500 ? 'error' : 'info';
    if (!(level === 'error' ? error : info)) return;
    destination.write(
      `{"level":"${level}","time":"${nowIso()}","service":${service},"request_id":${quote(e.request_id)},` +
        `"req":{"method":${quote(e.method)},"path":${quote(e.path)},"route":${quote(e.route)},"ip":${quote(e.ip)}` +
        `${e.user_agent === undefined ? '' : `,"user_agent":${quote(e.user_agent)}`}},` +
        `"res":{"status":${e.status}${e.length === undefined ? '' : `,"length":${e.length}`}}` +
        `${e.client_id === undefined ? '' : `,"client_id":${quote(e.client_id)}`}` +
        `${e.trace_id === undefined ? '' : `,"trace_id":${quote(e.trace_id)}`},` +
        `"duration_ms":${e.duration_ms},"msg":"request completed"}\n`,
    );
  };
}
