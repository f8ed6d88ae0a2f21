import { promises as dns } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, Socket, type LookupFunction } from 'node:net';
import { addressAllowed, checkWebhookUrl, type AddressPolicy } from './address-guard.js';

/**
 * One webhook POST (docs/api.md §8): only 2xx counts, redirects are reported rather than followed,
 * one deadline covers the whole exchange, and at most a few kilobytes of the answer are kept.
 *
 * The address check runs on what is actually connected to, not on the URL: the agents resolve
 * names through a lookup that drops blocked addresses before Node sees them, and check the peer
 * again once connected. A name that resolved to a public address when the webhook was
 * registered and to an internal one now (DNS rebinding) is therefore refused at every delivery.
 */

export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: 4 | 6 }>>;

export interface SendResult {
  /** Null when no response arrived. */
  statusCode: number | null;
  success: boolean;
  error: string | null;
  durationMs: number;
  responseBody: string;
}

export interface WebhookTransportOptions {
  allowInsecure: boolean;
  timeoutMs?: number;
  responseCapBytes?: number;
  resolver?: Resolver;
  maxSocketsPerHost?: number;
}

const ERROR_TEXT_LIMIT = 200;

const systemResolver: Resolver = async (hostname) => {
  const answers = await dns.lookup(hostname, { all: true, verbatim: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

class BlockedAddressError extends Error {
  readonly code = 'EWEBHOOKBLOCKED';

  constructor(address: string, range: string) {
    super(`address ${address} is in a blocked range (${range})`);
  }
}

/**
 * A `lookup` for the agents. Node asks for one address, or for all of them when it races
 * families (`autoSelectFamily`); either way it only ever hears of allowed ones.
 */
function guardedLookup(resolve: Resolver, policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    const { family: asked } = options;
    const wanted = asked === 4 || asked === 'IPv4' ? 4 : asked === 6 || asked === 'IPv6' ? 6 : 0;
    const answer = (addresses: { address: string; family: number }[], refusal: Error | null): void => {
      const first = addresses[0];
      if (!first) {
        const notFound = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
          code: 'ENOTFOUND',
          hostname,
        });
        callback(refusal ?? notFound, '');
      } else if (options.all) {
        callback(null, addresses);
      } else {
        callback(null, first.address, first.family);
      }
    };
    Promise.resolve()
      .then(() => resolve(hostname))
      .then(
        (answers) => {
          const allowed: { address: string; family: number }[] = [];
          let refusal: Error | null = null;
          for (const { address } of answers) {
            const family = isIP(address);
            if (family === 0 || (wanted !== 0 && family !== wanted)) continue;
            const range = addressAllowed(address, policy);
            if (range === null) allowed.push({ address, family });
            else refusal ??= new BlockedAddressError(address, range);
          }
          answer(allowed, refusal);
        },
        (err: unknown) => answer([], err instanceof Error ? err : new Error(String(err))),
      );
  };
}

/**
 * The second line: every socket the agent opens checks its peer on `connect`, before anything
 * (a request, a TLS ClientHello) is written to it.
 */
function guardConnections(agent: http.Agent, policy: AddressPolicy): void {
  const create = agent.createConnection.bind(agent);
  agent.createConnection = (options, callback) => {
    const socket = create(options, callback);
    if (socket instanceof Socket) {
      socket.prependOnceListener('connect', () => {
        const address = socket.remoteAddress ?? '';
        const range = addressAllowed(address, policy);
        if (range !== null) socket.destroy(new BlockedAddressError(address || 'unknown', range));
      });
    }
    return socket;
  };
}

const oneLine = (text: string, limit: number): string => {
  const line = text.replace(/[\s\p{Cc}]+/gu, ' ').trim();
  return line.length > limit ? `${line.slice(0, limit)}…` : line;
};

function errorText(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0 && !err.message)
    return oneLine(err.errors.map(errorText).join('; '), ERROR_TEXT_LIMIT);
  const message = err instanceof Error ? err.message || (err as NodeJS.ErrnoException).code : String(err);
  return oneLine(message || 'request failed', ERROR_TEXT_LIMIT);
}

function outcome(statusCode: number, location: string | undefined, body: string): string | null {
  if (statusCode >= 200 && statusCode < 300) return null;
  if (statusCode >= 300 && statusCode < 400) {
    return location
      ? `HTTP ${statusCode}: redirect to ${oneLine(location, ERROR_TEXT_LIMIT)} not followed`
      : `HTTP ${statusCode}: redirect not followed`;
  }
  const excerpt = oneLine(body, ERROR_TEXT_LIMIT);
  return excerpt ? `HTTP ${statusCode}: ${excerpt}` : `HTTP ${statusCode}`;
}

export class WebhookTransport {
  readonly #policy: AddressPolicy;
  readonly #timeoutMs: number;
  readonly #cap: number;
  readonly #http: http.Agent;
  readonly #https: https.Agent;
  #closed = false;

  constructor(options: WebhookTransportOptions) {
    this.#policy = { allowInsecure: options.allowInsecure };
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#cap = options.responseCapBytes ?? 4_096;
    const lookup = guardedLookup(options.resolver ?? systemResolver, this.#policy);
    // Agents of our own: HTTP(S)_PROXY support, where Node has it, only affects the global
    // ones, and a proxy would connect on our behalf past the address check.
    const agentOptions = { keepAlive: true, maxSockets: options.maxSocketsPerHost ?? 16, lookup };
    this.#http = new http.Agent(agentOptions);
    this.#https = new https.Agent(agentOptions);
    guardConnections(this.#http, this.#policy);
    guardConnections(this.#https, this.#policy);
  }

  /** Never throws: every failure, ours or the receiver's, is a result. */
  async send(
    input: { url: string; headers: Record<string, string>; body: string },
    signal?: AbortSignal,
  ): Promise<SendResult> {
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    const refused = (error: string): SendResult => ({
      statusCode: null,
      success: false,
      error,
      durationMs: elapsed(),
      responseBody: '',
    });
    if (this.#closed) return refused('transport is closed');
    if (signal?.aborted) return refused('aborted');
    // Node does not call `lookup` for a literal address, so those are checked here.
    const checked = checkWebhookUrl(input.url, this.#policy);
    if ('problem' in checked) return refused(checked.problem);
    const { url } = checked;
    const secure = url.protocol === 'https:';
    const body = Buffer.from(input.body, 'utf8');
    const cap = this.#cap;

    return new Promise<SendResult>((resolve) => {
      let statusCode: number | null = null;
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      let request: http.ClientRequest | undefined;
      let response: http.IncomingMessage | undefined;

      const settle = (success: boolean, error: string | null): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve({
          statusCode,
          success,
          error,
          durationMs: elapsed(),
          responseBody: Buffer.concat(chunks, size).toString('utf8'),
        });
      };
      const fail = (err: unknown): void => {
        settle(false, errorText(err));
        // Whatever is still open (a connect, a trickling body) goes, and its socket with it.
        response?.destroy();
        request?.destroy();
      };
      const complete = (): void => {
        const error = outcome(
          statusCode!,
          response?.headers.location,
          Buffer.concat(chunks, size).toString(),
        );
        settle(error === null, error);
      };
      const onAbort = (): void => fail(new Error('aborted'));
      const timer = setTimeout(
        () => fail(new Error(`timed out after ${this.#timeoutMs} ms`)),
        this.#timeoutMs,
      );
      signal?.addEventListener('abort', onAbort, { once: true });

      try {
        request = (secure ? https : http).request(url, {
          method: 'POST',
          agent: secure ? this.#https : this.#http,
          headers: { ...input.headers, 'content-length': String(body.length) },
        });
      } catch (err) {
        fail(err);
        return;
      }
      request.on('error', fail);
      request.on('close', () => {
        if (!response) fail(new Error('connection closed without a response'));
      });
      request.on('response', (res) => {
        response = res;
        statusCode = res.statusCode ?? null;
        res.on('data', (chunk: Buffer) => {
          if (settled) return;
          const room = cap - size;
          if (chunk.length < room) {
            chunks.push(chunk);
            size += chunk.length;
            return;
          }
          // Enough is read: the rest is not wanted, nor is the connection that carries it.
          chunks.push(chunk.subarray(0, room));
          size = cap;
          complete();
          res.destroy();
        });
        res.on('end', complete);
        res.on('error', fail);
        res.on('close', () => {
          if (res.complete) complete();
          else fail(new Error('connection closed before the response was complete'));
        });
      });
      request.end(body);
    });
  }

  /** Closes every pooled connection; later sends fail. */
  close(): void {
    this.#closed = true;
    this.#http.destroy();
    this.#https.destroy();
  }
}
