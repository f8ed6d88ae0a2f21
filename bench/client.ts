/**
 * The benchmarks' HTTP client: requests to the service with a bearer token, JSON in and out, an
 * error naming the status and the start of the body for any answer not expected (anything but a
 * 2xx unless told), and timed calls for the series the benchmarks measure. The token comes from
 * a source asked before every request, so that one taken lazily or renewed is never waited for
 * inside a timed call.
 */

/** Answers the bearer token to send; asked before each request. */
export type TokenSource = () => Promise<string>;

export interface RequestOptions {
  /** Of a body given as an object or a string; `application/json` unless told. */
  contentType?: string;
  accept?: string;
  /** The statuses that are not an error; unset: any 2xx. */
  expect?: readonly number[];
}

export interface Answer {
  status: number;
  text: string;
  /** The text parsed, or undefined when it is empty or not JSON. */
  json: unknown;
  headers: Headers;
}

export interface TimedAnswer {
  /** From sending until the answer was read: its last byte, or its text with `read: 'text'`. */
  ms: number;
  status: number;
  /** The answer's text, decoded on first use (after the clock stopped, unless read as text). */
  text(): string;
  /** The answer parsed, on first use. */
  json<T = any>(): T;
}

export interface TimedOptions extends Omit<RequestOptions, 'expect'> {
  /** How the answer is read while the clock runs: its bytes (the default) or its decoded text. */
  read?: 'bytes' | 'text';
  /** Gives up on the request (an error) after this many milliseconds. */
  timeoutMs?: number;
}

const is2xx = (status: number): boolean => status >= 200 && status < 300;

export class BenchClient {
  constructor(
    readonly base: string,
    private readonly source: TokenSource,
  ) {}

  /** The same service as another caller: a connector, say. */
  withToken(token: string): BenchClient {
    return new BenchClient(this.base, () => Promise.resolve(token));
  }

  token(): Promise<string> {
    return this.source();
  }

  /** The authorisation header, for requests sent by something else (a load generator, a stream). */
  async headers(): Promise<Record<string, string>> {
    return { authorization: `Bearer ${await this.source()}` };
  }

  /** A request of the benchmark's own, not timed, whatever its answer. */
  async send(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<Answer> {
    const res = await fetch(`${this.base}${path}`, await this.init(method, this.payload(body), options));
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, text, json, headers: res.headers };
  }

  /** A request of the benchmark's own, not timed: its answer parsed, an error unless it was expected. */
  async json<T = any>(
    method: string,
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<T> {
    const answer = await this.send(method, path, body, options);
    const expected = options.expect ? options.expect.includes(answer.status) : is2xx(answer.status);
    if (!expected)
      throw new Error(`${method} ${path} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    return answer.json as T;
  }

  /**
   * A measured request: timed from sending until the answer has been read, the body serialised
   * before the clock starts and the answer decoded and parsed after it stops (when asked for),
   * as a client in a process of its own would. An error on any answer but a 2xx.
   */
  async timed(
    method: string,
    path: string,
    body?: unknown,
    options: TimedOptions = {},
  ): Promise<TimedAnswer> {
    const init = await this.init(method, this.payload(body), options);
    if (options.timeoutMs !== undefined) init.signal = AbortSignal.timeout(options.timeoutMs);
    const t0 = process.hrtime.bigint();
    const res = await fetch(`${this.base}${path}`, init);
    let text: string | undefined;
    let bytes: ArrayBuffer | undefined;
    if (options.read === 'text') text = await res.text();
    else bytes = await res.arrayBuffer();
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const decoded = (): string => (text ??= Buffer.from(bytes!).toString('utf8'));
    if (!is2xx(res.status))
      throw new Error(`${method} ${path} answered ${res.status}: ${decoded().slice(0, 300)}`);
    let parsed: { value: unknown } | undefined;
    return {
      ms,
      status: res.status,
      text: decoded,
      json: <T>() => (parsed ??= { value: JSON.parse(decoded()) }).value as T,
    };
  }

  private payload(body: unknown): string | Buffer | undefined {
    if (body === undefined || typeof body === 'string' || Buffer.isBuffer(body)) return body;
    return JSON.stringify(body);
  }

  private async init(
    method: string,
    payload: string | Buffer | undefined,
    options: RequestOptions,
  ): Promise<RequestInit> {
    return {
      method,
      headers: {
        authorization: `Bearer ${await this.source()}`,
        ...(options.accept ? { accept: options.accept } : {}),
        ...(payload === undefined ? {} : { 'content-type': options.contentType ?? 'application/json' }),
      },
      ...(payload === undefined ? {} : { body: payload }),
    };
  }
}
