import http from 'node:http';
import { listenOn } from '../errors/port-in-use.js';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../logging/logger.js';
import type { Runtime } from '../runtime.js';
import { createApp, type App, type AppOptions } from './app.js';
import { answerClientError, MAX_HEADER_BYTES } from './client-errors.js';

export interface Server {
  app: App;
  http: http.Server;
  address: AddressInfo;
  /**
   * Stops accepting, waits for in-flight requests (at most `shutdownTimeoutMs`), then closes the
   * runtime (background work gets the same time to drain).
   */
  shutdown(): Promise<void>;
}

export async function startServer(
  runtime: Runtime,
  options: { port: number; host: string; shutdownTimeoutMs: number; logger: Logger } & AppOptions,
): Promise<Server> {
  const app = createApp(runtime, options);
  const handle = app.koa.callback();
  // Koa's handler settles every request itself, errors included; nothing is left to await here.
  // The header limit is the contract's, not whatever --max-http-header-size the process got.
  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => void handle(req, res));
  server.on('clientError', (err: NodeJS.ErrnoException, socket) =>
    answerClientError(err, socket, options.logger),
  );
  const address = await listenOn(server, options, 'PORT');

  let stopping: Promise<void> | undefined;
  const shutdown = (): Promise<void> => {
    stopping ??= (async () => {
      const { logger } = options;
      const began = Date.now();
      runtime.draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Keep-alive connections that go idle after their last response are closed as they do.
      const sweep = setInterval(() => server.closeIdleConnections(), 100);
      const force = setTimeout(() => {
        logger.warn('in-flight requests did not finish in time; closing their connections');
        server.closeAllConnections();
      }, options.shutdownTimeoutMs);
      await closed;
      clearInterval(sweep);
      clearTimeout(force);
      const drained = Date.now();
      await runtime.close(options.shutdownTimeoutMs);
      logger.info(
        { drain_ms: drained - began, close_ms: Date.now() - drained },
        'http server, background work and database driver closed',
      );
    })();
    return stopping;
  };
  return { app, http: server, address, shutdown };
}
