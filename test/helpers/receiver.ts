import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** How the receiver answers one request: a status (and body), after an optional delay. */
export interface Reply {
  status: number;
  body?: string;
  headers?: Record<string, string>;
  delayMs?: number;
}

/**
 * A webhook receiver on 127.0.0.1 that records what arrives and answers as the test says. It can
 * stop and start again on the same port, as a receiver that goes down and comes back.
 */
export class Receiver {
  readonly received: Received[] = [];
  /** What has been received and not answered yet (while a reply's `delayMs` runs). */
  readonly unanswered = new Set<Received>();
  /** Decides each answer; 204 by default. */
  reply: (req: Received) => Reply = () => ({ status: 204 });
  private server: http.Server | undefined;
  private port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  async start(): Promise<void> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const received: Received = {
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        };
        this.received.push(received);
        this.unanswered.add(received);
        const reply = this.reply(received);
        const send = () => {
          this.unanswered.delete(received);
          res.writeHead(reply.status, reply.headers ?? {});
          res.end(reply.body ?? '');
        };
        if (reply.delayMs) setTimeout(send, reply.delayMs);
        else send();
      });
    });
    server.keepAliveTimeout = 1_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The bodies received, parsed. */
  events(): {
    type: string;
    timestamp: string;
    data: { id: string; type: string; target: { id: string } };
  }[] {
    return this.received.map((r) => JSON.parse(r.body) as never);
  }
}

/**
 * A delivery checked as a receiver checks it, with the Standard Webhooks library rather than the
 * service's own code: its payload, or an error if the signature does not hold.
 */
export function verifyDelivery<T = { type: string; data: { id: string; type: string } }>(
  secret: string,
  r: Received,
): T {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  }) as T;
}
