import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../logging/logger.js';

/** The most a request line and its headers may take, as the contract states (Node's default). */
export const MAX_HEADER_BYTES = 16 * 1024;

/** The longest request path a refused request's problem names; a longer one is left out. */
const MAX_INSTANCE_CHARS = 2_048;

/** The path of the request line at the start of what the parser had read, if it is there. */
function pathOf(raw: unknown): string {
  if (!Buffer.isBuffer(raw)) return '';
  const head = raw.subarray(0, MAX_INSTANCE_CHARS + 32).toString('latin1');
  const match = /^[A-Z]+ (\/[^\s?#]*)/.exec(head);
  const path = match?.[1] ?? '';
  return path.length <= MAX_INSTANCE_CHARS ? path : '';
}

function response(status: number, headers: Record<string, string | number>, body = ''): string {
  const lines = Object.entries({
    ...headers,
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${lines.map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n${body}`;
}

/**
 * Answers a request that Node's HTTP parser refused before the application saw it. Request
 * lines and headers over `MAX_HEADER_BYTES` get a 431 in problem details like every other
 * error of the API, with a request id that the log line shares; anything else gets the bare
 * answer Node itself would give. Like Node, nothing is written once a response on the
 * connection has begun, and the connection is closed: the parser cannot go on from there.
 */
export function answerClientError(
  err: NodeJS.ErrnoException & { rawPacket?: unknown },
  socket: Duplex,
  logger: Logger,
): void {
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code !== 'ECONNRESET' && socket.writable && !inFlight?.headersSent) {
    if (err.code === 'HPE_HEADER_OVERFLOW') {
      const requestId = randomUUID();
      const body = JSON.stringify({
        type: 'about:blank',
        title: STATUS_CODES[431],
        status: 431,
        detail: `the request line and headers exceed ${MAX_HEADER_BYTES} bytes`,
        instance: pathOf(err.rawPacket),
        code: 'REQUEST_HEADER_FIELDS_TOO_LARGE',
        request_id: requestId,
      });
      socket.write(
        response(
          431,
          {
            'Content-Type': 'application/problem+json; charset=utf-8',
            'X-Request-Id': requestId,
            'X-Content-Type-Options': 'nosniff',
            'Cache-Control': 'no-store',
          },
          body,
        ),
      );
      logger.info({ request_id: requestId, status: 431 }, 'request refused: headers too large');
    } else {
      const status =
        err.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW'
          ? 413
          : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
            ? 408
            : 400;
      socket.write(response(status, {}));
    }
  }
  socket.destroy(err);
}
