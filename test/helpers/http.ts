export interface HttpResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as is, without JSON encoding (for malformed bodies and other media types). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
  token?: string;
}

/** A small HTTP client over fetch: real requests to a listening server, nothing mocked. */
export class HttpClient {
  constructor(
    readonly baseUrl: string,
    private readonly defaults: { token?: string; headers?: Record<string, string> } = {},
  ) {}

  withToken(token: string | undefined): HttpClient {
    return new HttpClient(this.baseUrl, { ...this.defaults, ...(token ? { token } : { token: undefined }) });
  }

  async request<T = any>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<HttpResponse<T>> {
    const headers: Record<string, string> = { ...(this.defaults.headers ?? {}), ...(options.headers ?? {}) };
    const token = options.token ?? this.defaults.token;
    if (token && !Object.keys(headers).some((h) => h.toLowerCase() === 'authorization')) {
      headers['Authorization'] = `Bearer ${token}`;
    }
    let body: string | Buffer | undefined;
    if (options.raw !== undefined) {
      body = options.raw;
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
        headers['Content-Type'] = 'application/json';
      }
    }
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    const type = response.headers.get('content-type') ?? '';
    if (text && /json/.test(type)) parsed = JSON.parse(text);
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  get<T = any>(path: string, options?: RequestOptions): Promise<HttpResponse<T>> {
    return this.request<T>('GET', path, options);
  }
  post<T = any>(path: string, body?: unknown, options: RequestOptions = {}): Promise<HttpResponse<T>> {
    return this.request<T>('POST', path, { ...options, ...(body === undefined ? {} : { body }) });
  }
  put<T = any>(path: string, body?: unknown, options: RequestOptions = {}): Promise<HttpResponse<T>> {
    return this.request<T>('PUT', path, { ...options, ...(body === undefined ? {} : { body }) });
  }
  patch<T = any>(path: string, body?: unknown, options: RequestOptions = {}): Promise<HttpResponse<T>> {
    return this.request<T>('PATCH', path, { ...options, ...(body === undefined ? {} : { body }) });
  }
  delete<T = any>(path: string, options?: RequestOptions): Promise<HttpResponse<T>> {
    return this.request<T>('DELETE', path, options);
  }
}

/**
 * Waits what a refused request's `Retry-After` (in seconds) asks before a request is sent again,
 * at most `atMostMs`: the header is advice, and a test keeps its client brisk. A client following
 * the protocol, not a wait for a condition of the test.
 */
export function honourRetryAfter(retryAfter: string | null, atMostMs: number): Promise<void> {
  const seconds = Number(retryAfter ?? 0);
  const ms = Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds * 1000, atMostMs) : 0;
  return new Promise((resolve) => setTimeout(resolve, ms));
}
