import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import http, { STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listenOn } from './errors/port-in-use.js';
import type { Logger } from './logging/logger.js';

const BEARER = /^Bearer +(\S+)$/i;

/**
 * Whether an Authorization header carries `token` as its bearer token. Both are hashed before
 * they are compared, so the comparison takes the same time whatever their lengths and wherever
 * they first differ.
 */
export function carriesMetricsToken(authorization: string, token: string): boolean {
  const given = BEARER.exec(authorization.trim())?.[1] ?? '';
  const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(token)) && given !== '';
}

/**
 * The challenge of a scrape refused for want of the metrics token: a realm of its own, as the
 * API's access tokens do not open it.
 */
export const METRICS_CHALLENGE = 'Bearer realm="metrics"';

/** A Prometheus exposition: its media type and text. */
export interface Exposition {
  contentType: string;
  text: string;
}

export interface MetricsServer {
  address: AddressInfo;
  close(): Promise<void>;
}

/**
 * The listener of METRICS_PORT: `GET /metrics` and nothing else, behind the bearer token when one
 * is configured. It is a plain HTTP server of its own, not the API's Koa app, so that scrapes
 * stay apart from the API's port, middleware, rate limits and access log; its errors are problem
 * details like the API's.
 */
export async function startMetricsServer(options: {
  port: number;
  host: string;
  token: string | undefined;
  scrape: () => Promise<Exposition>;
  logger: Logger;
}): Promise<MetricsServer> {
  const { logger } = options;
  const problem = (
    res: http.ServerResponse,
    path: string,
    status: number,
    code: string,
    detail: string,
    headers: Record<string, string> = {},
  ): void => {
    const body = JSON.stringify({
      type: 'about:blank',
      title: STATUS_CODES[status] ?? 'Error',
      status,
      detail,
      instance: path,
      code,
      request_id: randomUUID(),
    });
    res.writeHead(status, {
      ...headers,
      'Content-Type': 'application/problem+json',
      'Content-Length': Buffer.byteLength(body),
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
    });
    res.end(body);
  };
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path !== '/metrics') {
      problem(res, path, 404, 'NOT_FOUND', `no resource at ${path}; this port serves /metrics only`);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      problem(res, path, 405, 'METHOD_NOT_ALLOWED', `${req.method} is not allowed on /metrics; use GET`, {
        Allow: 'GET, HEAD',
      });
      return;
    }
    if (options.token !== undefined && !carriesMetricsToken(req.headers.authorization ?? '', options.token)) {
      problem(
        res,
        path,
        401,
        'UNAUTHENTICATED',
        'a scrape of /metrics needs the bearer token METRICS_TOKEN holds',
        {
          'WWW-Authenticate': METRICS_CHALLENGE,
        },
      );
      return;
    }
    options.scrape().then(
      ({ contentType, text }) => {
        res.writeHead(200, {
          'Content-Type': contentType,
          'Content-Length': Buffer.byteLength(text),
          'Cache-Control': 'no-store',
        });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: unknown) => {
        logger.error({ err }, 'a scrape of /metrics failed');
        problem(res, path, 500, 'INTERNAL', 'an internal error occurred');
      },
    );
  });
  const address = await listenOn(server, options, 'METRICS_PORT');
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
