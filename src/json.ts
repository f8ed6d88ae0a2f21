import { AppError } from './errors/errors.js';

/**
 * A value together with its JSON text, made by code that had to serialise the value anyway (the
 * decision log does, for every decision it records): the HTTP edge sends the text as it is
 * instead of serialising the value a second time. The value may be left out, to be read back
 * from the text only if someone asks (the response checks of the test suite): a batch of a
 * thousand decisions then keeps none of their objects alive while it works through the rest,
 * which keeps young-generation collections during it short.
 */
export class Serialised<T = unknown> {
  #value: T | undefined;

  constructor(
    /** The JSON text, or its UTF-8 bytes (made on another thread, they are sent as they are). */
    readonly json: string | Buffer,
    value?: T,
  ) {
    this.#value = value;
  }

  get text(): string {
    return typeof this.json === 'string' ? this.json : this.json.toString('utf8');
  }

  get value(): T {
    return (this.#value ??= JSON.parse(this.text) as T);
  }
}

/**
 * A JSON request body not parsed yet: its UTF-8 bytes, for the code that uses it to parse and
 * check where it suits (a batch of a thousand decisions, on a decision thread rather than the
 * event loop). `parseJsonBody` reads it as the HTTP edge reads any other body.
 */
export class JsonBytes {
  constructor(readonly bytes: Uint8Array) {}
}

/**
 * A request body's JSON text read as the service reads every JSON body: an object or an array at
 * the top (what the body parser's strict mode allows), an empty body read as `{}`; anything else
 * is `MALFORMED_JSON`.
 */
export function parseJsonBody(text: string): unknown {
  const start = /\S/.exec(text)?.[0];
  if (start === undefined) return {};
  if (start !== '{' && start !== '[')
    throw new AppError('MALFORMED_JSON', 'the request body is not valid JSON');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new AppError('MALFORMED_JSON', 'the request body is not valid JSON');
  }
}

/** UTF-8 bytes as text (a malformed sequence reads as U+FFFD, as for any other body). */
export const utf8Text = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
