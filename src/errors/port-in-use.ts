import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A port something must listen on is taken: the service's own port, or the Bolt or HTTP port of
 * the local Neo4j started for development. `message` says which setting moves it.
 */
export class PortInUseError extends Error {
  override name = 'PortInUseError';

  constructor(
    readonly port: number,
    readonly listener: 'service' | 'bolt' | 'http',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Starts `server` listening, and answers where; a port already taken rejects with a
 * `PortInUseError` naming `setting`, the variable that moves it.
 */
export function listenOn(
  server: Server,
  where: { port: number; host: string },
  setting: string,
): Promise<AddressInfo> {
  return new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(
        err.code === 'EADDRINUSE'
          ? new PortInUseError(
              where.port,
              'service',
              `port ${where.port} is already in use; set ${setting} to another port`,
            )
          : err,
      );
    });
    server.listen(where.port, where.host, () => resolve(server.address() as AddressInfo));
  });
}
