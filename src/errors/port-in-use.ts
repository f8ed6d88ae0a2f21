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
