import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the proxy sent again, to the next instance, because the one before gave no answer. */
export interface Retry {
  method: string;
  path: string;
  /** The port that failed, and the error that says how. */
  from: number;
  error: string;
  to: number;
}

/** Headers that concern one connection only, never passed on by a proxy (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  }
  return out;
}

/**
 * A reverse proxy on 127.0.0.1 that hands requests to the instances on `ports` in turn. A request
 * that got no answer at all (the connection was refused, reset or closed before a status line
 * came back) goes to the next instance, until each has been tried once; one that got an answer,
 * whatever its status, is passed back as it is and never sent again. Every answer names the
 * instance that gave it in `X-Upstream-Port`. A kept-alive connection that an instance closed while
 * it sat idle is not counted as a try: the request goes once more to the same instance.
 */
export class RoundRobinProxy {
  readonly retries: Retry[] = [];
  /** Requests answered 502 because no instance answered them. */
  unanswered = 0;
  /** For each of those, the errors of its tries, in order: what a failing test prints. */
  readonly unansweredErrors: string[][] = [];
  private next = 0;
  private ports: readonly number[] = [];
  private server: http.Server | undefined;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

  /**
   * The instances to hand requests to, in turn. Set apart from `start()`, so that the instances
   * can be started knowing the proxy's address (their public base URL).
   */
  route(ports: readonly number[]): void {
    this.ports = [...ports];
  }

  get url(): string {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (!address) throw new Error('the proxy is not listening');
    return `http://127.0.0.1:${address.port}`;
  }

  async start(): Promise<void> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.forward(req, res, Buffer.concat(chunks), []));
      req.on('error', () => res.destroy());
    });
    server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.agent.destroy();
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /**
   * The next instance in turn that this request has not tried yet. Other requests move the turn
   * on meanwhile, so the plain next one may be one that already failed this request.
   */
  private pick(tried: readonly number[]): number {
    for (let n = 0; n < this.ports.length; n += 1) {
      const port = this.ports[this.next % this.ports.length]!;
      this.next += 1;
      if (!tried.includes(port)) return port;
    }
    return this.ports[this.next++ % this.ports.length]!;
  }

  private forward(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    body: Buffer,
    tried: readonly number[],
    failed?: { from: number; error: string; stale?: boolean },
    errors: string[] = [],
  ): void {
    if (this.ports.length === 0) {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('no instance to hand the request to');
      return;
    }
    const port = failed?.stale ? failed.from : this.pick(tried);
    if (failed && !failed.stale)
      this.retries.push({ method: req.method ?? '', path: req.url ?? '', ...failed, to: port });
    const headers = endToEnd(req.headers);
    headers['host'] = `127.0.0.1:${port}`;
    if (body.length > 0) headers['content-length'] = String(body.length);
    let answered = false;
    const upstream = http.request(
      {
        host: '127.0.0.1',
        port,
        method: req.method,
        path: req.url,
        headers,
        agent: failed?.stale ? false : this.agent,
      },
      (answer) => {
        answered = true;
        res.writeHead(answer.statusCode ?? 502, {
          ...endToEnd(answer.headers),
          'x-upstream-port': String(port),
        });
        answer.pipe(res);
        // Cut off in the middle of its body: the client must see a broken answer, not a short one.
        answer.on('close', () => {
          if (!answer.complete) res.destroy();
        });
      },
    );
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      if (answered) {
        res.destroy();
        return;
      }
      const error = err.code ?? err.message;
      errors.push(`:${port} ${error}${upstream.reusedSocket ? ' (kept-alive socket)' : ''}`);
      // A kept-alive socket the instance closed as it sat idle says nothing about the instance:
      // the request goes again to the same one, once, on a fresh connection.
      if (upstream.reusedSocket && !failed?.stale && (error === 'ECONNRESET' || error === 'EPIPE')) {
        this.forward(req, res, body, tried, { from: port, error, stale: true }, errors);
        return;
      }
      if (tried.length + 1 < this.ports.length) {
        this.forward(req, res, body, [...tried, port], { from: port, error }, errors);
        return;
      }
      this.unanswered += 1;
      this.unansweredErrors.push(errors);
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`no instance answered (last: ${error})`);
    });
    upstream.end(body);
  }
}
