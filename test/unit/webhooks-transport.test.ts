import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { blockedRange } from '../../src/webhooks/address-guard.js';
import { newWebhookSecret, webhookHeaders } from '../../src/webhooks/signature.js';
import { WebhookTransport, type Resolver } from '../../src/webhooks/transport.js';
import { until } from '../helpers/wait.js';

/**
 * Every test here talks to receivers on 127.0.0.1 only. Names are answered by injected
 * resolvers, and every connection attempt made by any socket is recorded: after each test,
 * none may have gone anywhere but loopback, whatever the scenario.
 */

interface Receiver {
  port: number;
  url: (path?: string) => string;
  requests: { headers: http.IncomingHttpHeaders; body: string }[];
  connections: number;
  /** Connections the client has closed (or that ended otherwise). */
  closed: number;
  close: () => Promise<void>;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

async function receiver(handler: Handler = (_req, res) => res.end('ok')): Promise<Receiver> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      state.requests.push({ headers: req.headers, body });
      handler(req, res, body);
    });
  });
  server.on('connection', (socket: net.Socket) => {
    state.connections++;
    socket.on('close', () => state.closed++);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  const state: Receiver = {
    port,
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    requests: [],
    connections: 0,
    closed: 0,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return state;
}

const answering =
  (...addresses: string[]): Resolver =>
  async () =>
    addresses.map((address) => ({ address, family: net.isIP(address) === 6 ? 6 : 4 }));

const SECRET = newWebhookSecret();

const message = (body = '{"type":"test"}') => ({
  headers: webhookHeaders({
    id: 'evt_1',
    timestampS: Math.floor(Date.now() / 1000),
    body,
    secrets: [SECRET],
  }),
  body,
});

describe('webhook transport', () => {
  const attempts: string[] = [];
  let tlsConnects = 0;
  let onSocket: ((socket: net.Socket) => void) | undefined;
  const connectDescriptor = Object.getOwnPropertyDescriptor(net.Socket.prototype, 'connect')!;
  const tlsConnect = tls.connect;
  const cleanups: (() => Promise<void> | void)[] = [];

  const transport = (options: ConstructorParameters<typeof WebhookTransport>[0]): WebhookTransport => {
    const created = new WebhookTransport(options);
    cleanups.push(() => created.close());
    return created;
  };
  const listen = async (handler?: Handler): Promise<Receiver> => {
    const created = await receiver(handler);
    cleanups.push(() => created.close());
    return created;
  };

  before(() => {
    const connect = connectDescriptor.value;
    Object.defineProperty(net.Socket.prototype, 'connect', {
      ...connectDescriptor,
      value: function (this: net.Socket, ...args: unknown[]) {
        this.on('connectionAttempt', (address: string) => attempts.push(address));
        onSocket?.(this);
        return connect.apply(this, args);
      },
    });
    (tls as { connect: unknown }).connect = (...args: unknown[]) => {
      tlsConnects++;
      return (tlsConnect as (...a: unknown[]) => tls.TLSSocket)(...args);
    };
  });

  after(() => {
    Object.defineProperty(net.Socket.prototype, 'connect', connectDescriptor);
    (tls as { connect: unknown }).connect = tlsConnect;
  });

  beforeEach(() => {
    attempts.length = 0;
    tlsConnects = 0;
    onSocket = undefined;
  });

  afterEach(async () => {
    onSocket = undefined;
    for (const cleanup of cleanups.splice(0)) await cleanup();
    for (const address of attempts)
      expect(blockedRange(address), `connected to ${address}`).to.equal('loopback');
  });

  describe('delivery to a local receiver', () => {
    it('delivers with the Standard Webhooks headers, and counts 2xx as success', async () => {
      const secret = newWebhookSecret();
      const seen = await listen((req, res, body) => {
        new Webhook(secret).verify(body, req.headers as Record<string, string>);
        // The receiver takes a while to answer, so that the duration has something to measure.
        setTimeout(() => res.writeHead(202).end('accepted'), 40);
      });
      const body = JSON.stringify({ type: 'principal.created', data: { name: 'Zoë' } });
      const headers = webhookHeaders({
        id: 'evt_01HX',
        timestampS: Math.floor(Date.now() / 1000),
        body,
        secrets: [secret],
      });
      const started = performance.now();
      const result = await transport({ allowInsecure: true }).send({ url: seen.url(), headers, body });
      const elapsedMs = performance.now() - started;

      expect(result).to.include({ statusCode: 202, success: true, error: null, responseBody: 'accepted' });
      // The send's own time: at least the receiver's delay, at most the time the call took.
      expect(result.durationMs)
        .to.be.a('number')
        .within(35, Math.ceil(elapsedMs) + 1);
      expect(seen.requests).to.have.length(1);
      const received = seen.requests[0]!;
      expect(received.body).to.equal(body);
      expect(received.headers).to.include({
        'content-type': 'application/json',
        'user-agent': 'PrincipalsAccessService-Webhooks/1',
        'webhook-id': 'evt_01HX',
        'webhook-timestamp': headers['webhook-timestamp'],
        'webhook-signature': headers['webhook-signature'],
        'content-length': String(Buffer.byteLength(body)),
      });
    });

    it('reports a 500 with the start of its body, on one line', async () => {
      const seen = await listen((_req, res) =>
        res.writeHead(500).end(`boom\n\tat handler\r\n${'x'.repeat(1000)}`),
      );
      const result = await transport({ allowInsecure: true }).send({ url: seen.url(), ...message() });
      expect(result.statusCode).to.equal(500);
      expect(result.success).to.equal(false);
      expect(result.error).to.match(/^HTTP 500: boom at handler x+…$/);
      expect(result.error!.length).to.be.at.most('HTTP 500: '.length + 201);
    });

    it('reports a 410 as a failure with its status', async () => {
      const seen = await listen((_req, res) => res.writeHead(410).end());
      const result = await transport({ allowInsecure: true }).send({ url: seen.url(), ...message() });
      expect(result).to.include({ statusCode: 410, success: false, error: 'HTTP 410', responseBody: '' });
    });

    it('does not follow redirects', async () => {
      const target = await listen();
      for (const status of [301, 302, 303, 307, 308]) {
        const seen = await listen((_req, res) =>
          res.writeHead(status, { location: target.url('/elsewhere') }).end('moved'),
        );
        const result = await transport({ allowInsecure: true }).send({ url: seen.url(), ...message() });
        expect(result.statusCode).to.equal(status);
        expect(result.success).to.equal(false);
        expect(result.error).to.equal(`HTTP ${status}: redirect to ${target.url('/elsewhere')} not followed`);
      }
      const seen = await listen((_req, res) =>
        res.writeHead(302, { location: `${target.url()}?${'q'.repeat(5000)}` }).end(),
      );
      const result = await transport({ allowInsecure: true }).send({ url: seen.url(), ...message() });
      expect(result.error!.length).to.be.below(300);
      expect(target.connections).to.equal(0);
      expect(target.requests).to.have.length(0);
    });

    it('times out a receiver that does not answer', async () => {
      const seen = await listen(() => {});
      const result = await transport({ allowInsecure: true, timeoutMs: 300 }).send({
        url: seen.url(),
        ...message(),
      });
      expect(result).to.include({ statusCode: null, success: false, error: 'timed out after 300 ms' });
      expect(result.durationMs).to.be.within(250, 1500);
    });

    it('times out a body that trickles, the deadline covering the whole exchange', async () => {
      const seen = await listen((_req, res) => {
        res.writeHead(200);
        res.write('partial');
      });
      const result = await transport({ allowInsecure: true, timeoutMs: 300 }).send({
        url: seen.url(),
        ...message(),
      });
      expect(result).to.include({ statusCode: 200, success: false, error: 'timed out after 300 ms' });
      expect(result.responseBody).to.equal('partial');
    });

    it('reads a huge response no further than the cap', async () => {
      let finished = false;
      const seen = await listen((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(64 * 1024, 'a');
        let left = 80; // 5 MiB
        const pump = (): void => {
          while (left > 0) {
            left--;
            if (!res.write(chunk)) {
              res.once('drain', pump);
              return;
            }
          }
          res.end(() => (finished = true));
        };
        res.on('error', () => {});
        pump();
      });
      const result = await transport({ allowInsecure: true, responseCapBytes: 1024 }).send({
        url: seen.url(),
        ...message(),
      });
      expect(result).to.include({ statusCode: 200, success: true, error: null });
      expect(result.responseBody).to.equal('a'.repeat(1024));
      await until('the sender closed the connection', () => seen.closed === 1, 5_000);
      expect(finished, 'the receiver could write its whole body').to.equal(false);
    });

    it('reports a refused connection', async () => {
      const closed = await receiver();
      await closed.close();
      const result = await transport({ allowInsecure: true }).send({ url: closed.url(), ...message() });
      expect(result.statusCode).to.equal(null);
      expect(result.success).to.equal(false);
      expect(result.error).to.equal(`connect ECONNREFUSED 127.0.0.1:${closed.port}`);
    });

    it('stops when the signal aborts', async () => {
      const seen = await listen(() => {});
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      const result = await transport({ allowInsecure: true }).send(
        { url: seen.url(), ...message() },
        controller.signal,
      );
      expect(result).to.include({ statusCode: null, success: false, error: 'aborted' });

      const early = await transport({ allowInsecure: true }).send(
        { url: seen.url(), ...message() },
        AbortSignal.abort(),
      );
      expect(early.error).to.equal('aborted');
      expect(seen.connections).to.equal(1);
    });

    it('turns what the HTTP client refuses into a result instead of throwing', async () => {
      const seen = await listen();
      const result = await transport({ allowInsecure: true }).send({
        url: seen.url(),
        headers: { 'x-bad': 'line\nbreak' },
        body: '{}',
      });
      expect(result.success).to.equal(false);
      expect(result.error).to.be.a('string').that.is.not.empty;
      expect(seen.connections).to.equal(0);
    });

    it('keeps connections alive between deliveries, and fails sends once closed', async () => {
      const seen = await listen();
      const sender = transport({ allowInsecure: true });
      for (let i = 0; i < 3; i++) {
        expect((await sender.send({ url: seen.url(), ...message() })).success).to.equal(true);
      }
      expect(seen.connections).to.equal(1);
      sender.close();
      const result = await sender.send({ url: seen.url(), ...message() });
      expect(result).to.include({ success: false, error: 'transport is closed' });
    });

    it('resolves names with the system resolver by default', async () => {
      const seen = await listen();
      const result = await transport({ allowInsecure: true }).send({
        url: `http://localhost:${seen.port}/hook`,
        ...message(),
      });
      expect(result.success, result.error ?? '').to.equal(true);
    });
  });

  describe('address guard', () => {
    const url = 'https://hooks.example.test/';

    it('connects to nothing when the name resolves into a blocked range', async () => {
      const cases: [string, string][] = [
        ['10.0.0.5', 'private'],
        ['172.16.3.4', 'private'],
        ['192.168.1.1', 'private'],
        ['169.254.169.254', 'metadata'],
        ['169.254.1.1', 'link-local'],
        ['100.100.100.200', 'metadata'],
        ['100.64.0.1', 'cgnat'],
        ['0.0.0.0', 'unspecified'],
        ['fd00:ec2::254', 'metadata'],
        ['fe80::1', 'link-local'],
        ['fc00::1', 'private'],
        ['::ffff:10.0.0.5', 'private'],
        ['::ffff:a9fe:a9fe', 'metadata'],
        ['::ffff:7f00:1', 'loopback'],
        ['64:ff9b::a00:5', 'private'],
        ['2002:c0a8:101::1', 'private'],
      ];
      let resolved = 0;
      for (const [address, range] of cases) {
        const sender = transport({
          allowInsecure: false,
          resolver: async (name) => {
            expect(name).to.equal('hooks.example.test');
            resolved++;
            return answering(address)(name);
          },
        });
        const result = await sender.send({ url, ...message() });
        expect(result, address).to.include({
          statusCode: null,
          success: false,
          error: `address ${address} is in a blocked range (${range})`,
        });
      }
      expect(resolved).to.equal(cases.length);
      expect(attempts).to.deep.equal([]);
    });

    it('refuses a name whose every address is blocked', async () => {
      const result = await transport({
        allowInsecure: false,
        resolver: answering('10.0.0.5', '169.254.169.254', 'fd00::1'),
      }).send({ url, ...message() });
      expect(result.error).to.equal('address 10.0.0.5 is in a blocked range (private)');
      expect(attempts).to.deep.equal([]);
    });

    it('refuses loopback unless insecure URLs are allowed, without connecting', async () => {
      const seen = await listen();
      const result = await transport({ allowInsecure: false, resolver: answering('127.0.0.1') }).send({
        url: `https://hooks.example.test:${seen.port}/`,
        ...message(),
      });
      expect(result.error).to.equal('address 127.0.0.1 is in a blocked range (loopback)');
      expect(seen.connections).to.equal(0);
      expect(attempts).to.deep.equal([]);
    });

    it('refuses a literal address in a blocked range before opening anything', async () => {
      let resolved = 0;
      const sender = transport({
        allowInsecure: true,
        resolver: async () => {
          resolved++;
          return [];
        },
      });
      for (const literal of [
        'https://10.1.2.3/',
        'https://[::ffff:10.1.2.3]/',
        'https://169.254.169.254/',
        'http://0xa010203/',
      ]) {
        const result = await sender.send({ url: literal, ...message() });
        expect(result.error, literal).to.match(/^url points to an? [a-z-]+ address/);
        expect(result.statusCode).to.equal(null);
      }
      expect(resolved).to.equal(0);
      expect(tlsConnects).to.equal(0);
      expect(attempts).to.deep.equal([]);
    });

    it('connects only to the allowed addresses among those a name resolves to', async () => {
      const seen = await listen();
      const result = await transport({
        allowInsecure: true,
        resolver: answering('10.0.0.5', '169.254.169.254', '127.0.0.1'),
      }).send({ url: `http://hooks.example.test:${seen.port}/hook`, ...message() });
      expect(result.success, result.error ?? '').to.equal(true);
      expect(seen.requests[0]!.headers.host).to.equal(`hooks.example.test:${seen.port}`);
      expect(attempts).to.deep.equal(['127.0.0.1']);
    });

    it('answers both ways Node asks for addresses (one, or all of them)', async () => {
      const seen = await listen();
      const previous = net.getDefaultAutoSelectFamily();
      try {
        for (const autoSelect of [true, false]) {
          net.setDefaultAutoSelectFamily(autoSelect);
          const ok = await transport({ allowInsecure: true, resolver: answering('127.0.0.1') }).send({
            url: `http://hooks.example.test:${seen.port}/hook`,
            ...message(),
          });
          expect(ok.success, `${autoSelect}: ${ok.error}`).to.equal(true);
          const blocked = await transport({ allowInsecure: true, resolver: answering('192.168.0.1') }).send({
            url: `http://hooks.example.test:${seen.port}/hook`,
            ...message(),
          });
          expect(blocked.error).to.equal('address 192.168.0.1 is in a blocked range (private)');
        }
      } finally {
        net.setDefaultAutoSelectFamily(previous);
      }
      expect(seen.requests).to.have.length(2);
    });

    it('reports a name that does not resolve', async () => {
      const result = await transport({ allowInsecure: false, resolver: answering() }).send({
        url,
        ...message(),
      });
      expect(result.error).to.equal('getaddrinfo ENOTFOUND hooks.example.test');
      const failing = await transport({
        allowInsecure: false,
        resolver: async () => {
          throw new Error('resolver down');
        },
      }).send({ url, ...message() });
      expect(failing.error).to.equal('resolver down');
      expect(attempts).to.deep.equal([]);
    });

    it('refuses a name rebound to a private address after it was delivered to', async () => {
      const seen = await listen((_req, res) => res.writeHead(200, { connection: 'close' }).end());
      const target = `http://hooks.example.test:${seen.port}/hook`;
      const answers = ['127.0.0.1', '10.0.0.5'];
      const rebinding: Resolver = async (name) => answering(answers.shift() ?? '10.0.0.5')(name);

      const local = transport({ allowInsecure: true, resolver: rebinding });
      expect((await local.send({ url: target, ...message() })).success).to.equal(true);
      // The receiver closed the connection, so the next delivery resolves the name afresh.
      const again = await local.send({ url: target, ...message() });
      expect(again.error).to.equal('address 10.0.0.5 is in a blocked range (private)');

      const strictAnswers = ['10.0.0.5'];
      const strictSender = transport({
        allowInsecure: false,
        resolver: async (name) => answering(strictAnswers.shift() ?? '192.168.0.9')(name),
      });
      for (const expected of ['10.0.0.5', '192.168.0.9']) {
        const result = await strictSender.send({ url: 'https://hooks.example.test/', ...message() });
        expect(result.error).to.equal(`address ${expected} is in a blocked range (private)`);
      }
      expect(seen.requests).to.have.length(1);
      expect(attempts).to.deep.equal(['127.0.0.1']);
    });

    it('checks the peer once connected, and writes nothing to a blocked one', async () => {
      const seen = await listen();
      // The socket reports an internal peer, as it would if an address slipped past the lookup.
      onSocket = (socket) => Object.defineProperty(socket, 'remoteAddress', { get: () => '10.9.8.7' });
      const result = await transport({ allowInsecure: true, resolver: answering('127.0.0.1') }).send({
        url: `http://hooks.example.test:${seen.port}/hook`,
        ...message(),
      });
      expect(result).to.include({
        statusCode: null,
        success: false,
        error: 'address 10.9.8.7 is in a blocked range (private)',
      });
      await until('the sender closed the connection', () => seen.closed === 1, 5_000);
      expect(seen.connections).to.equal(1);
      expect(seen.requests).to.have.length(0);
    });
  });
});
