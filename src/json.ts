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
    readonly json: string,
    value?: T,
  ) {
    this.#value = value;
  }

  get value(): T {
    return (this.#value ??= JSON.parse(this.json) as T);
  }
}
