import fc from 'fast-check';

/** A JSON Schema as the OpenAPI document holds it. */
export type Schema = Record<string, unknown>;

/** Values a hostile client tries in an integer query parameter. */
export const HOSTILE_INTEGERS = [
  '0',
  '-1',
  '0x10',
  '1e1',
  '1e400',
  '+2',
  ' 2',
  '2 ',
  '007',
  '1.5',
  '-0',
  '9007199254740993',
  '9223372036854775807',
  '-9223372036854775808',
  '1'.repeat(400),
];

/** Values a hostile client tries in a time parameter. */
export const HOSTILE_TIMES = [
  '2026-12-31T23:59:60Z',
  '2026-01-01T00:00:00.1234567890Z',
  '2026-01-01 00:00:00Z',
  '0000-01-01T00:00:00Z',
  '10000-01-01T00:00:00Z',
  '2026-02-30T00:00:00Z',
  '2026-01-01T00:00:00+24:00',
  '2026-01-01',
  'yesterday',
];

/** Values a hostile client tries in any query parameter. */
export const HOSTILE_QUERY_VALUES = [
  ...HOSTILE_INTEGERS,
  ...HOSTILE_TIMES,
  '',
  ' ',
  'true',
  'TRUE',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  "x' OR '1'='1",
  '") RETURN 1 //',
  '${x}',
  '%00',
  '\u0000',
  'é',
  '𝕏',
  '../../etc/passwd',
  'principal.*',
  'a,b,,c',
];

/** Strings that go beyond what a field expects in some way. */
const hostileString = fc.oneof(
  fc.constantFrom(...HOSTILE_QUERY_VALUES),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ minLength: 1025, maxLength: 1200 }),
);

const hostileNumber = fc.oneof(
  fc.constantFrom(0, -1, 1.5, 2 ** 31, 2 ** 53, Number.MAX_SAFE_INTEGER + 2, 1e308, -1e308, 9.9e-324),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Anything JSON can carry, including deep and wide values. */
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  hostileString,
  hostileNumber,
  fc.constant(null),
);

export interface SchemaArbitraryOptions {
  /** The document's `components.schemas`, for `$ref`. */
  components: Record<string, Schema>;
  /** Ids known to exist, by prefix (`prn`, `grp`, ...), so that requests also reach real data. */
  ids: Record<string, string[]>;
}

function resolve(schema: Schema, options: SchemaArbitraryOptions): Schema {
  const ref = schema['$ref'];
  if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
    return options.components[ref.slice('#/components/schemas/'.length)] ?? {};
  }
  return schema;
}

/** A value of the string a schema describes: from its enum, an id of its pattern, or text. */
function stringFor(schema: Schema, options: SchemaArbitraryOptions): fc.Arbitrary<string> {
  const pattern = schema['pattern'];
  const choices: fc.Arbitrary<string>[] = [];
  if (typeof pattern === 'string') {
    const prefix = /^\^\(?\??:?([a-z]{3})_/.exec(pattern)?.[1];
    const known = prefix ? (options.ids[prefix] ?? []) : [];
    if (known.length > 0) choices.push(fc.constantFrom(...known));
    try {
      choices.push(fc.stringMatching(new RegExp(pattern)).filter((s) => s.length <= 300));
    } catch {
      // A pattern JavaScript cannot turn into strings: plain text stands in.
    }
  }
  if (schema['format'] === 'date-time') {
    choices.push(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()));
  }
  if (schema['format'] === 'email') choices.push(fc.emailAddress());
  const min = typeof schema['minLength'] === 'number' ? schema['minLength'] : 0;
  const max = typeof schema['maxLength'] === 'number' ? Math.min(schema['maxLength'], 64) : 32;
  choices.push(fc.string({ minLength: Math.min(min, max), maxLength: Math.max(min, max) }));
  return fc.oneof(...choices);
}

/**
 * Values for a schema, mostly valid (so requests get past validation and reach the service),
 * and sometimes anything at all in some place of them (so that validation is attacked too).
 */
export function arbitraryFor(
  schema: Schema,
  options: SchemaArbitraryOptions,
  depth = 0,
): fc.Arbitrary<unknown> {
  const s = resolve(schema, options);
  if (depth > 5) return anyJson;
  const valid = validFor(s, options, depth);
  return fc.oneof({ weight: 6, arbitrary: valid }, { weight: 1, arbitrary: anyJson });
}

function validFor(s: Schema, options: SchemaArbitraryOptions, depth: number): fc.Arbitrary<unknown> {
  if ('const' in s) return fc.constant(s['const']);
  if (Array.isArray(s['enum'])) return fc.constantFrom(...(s['enum'] as unknown[]));
  const union = (s['anyOf'] ?? s['oneOf']) as Schema[] | undefined;
  if (Array.isArray(union) && union.length > 0) {
    return fc.oneof(...union.map((branch) => arbitraryFor(branch, options, depth + 1)));
  }
  const type = s['type'];
  if (type === 'object' || s['properties'] !== undefined) {
    const properties = (s['properties'] ?? {}) as Record<string, Schema>;
    const required = new Set((s['required'] ?? []) as string[]);
    const record: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, property] of Object.entries(properties)) {
      record[name] = arbitraryFor(property, options, depth + 1);
    }
    const known = fc.record(record, { requiredKeys: [...required].filter((k) => k in record) });
    const extra = s['additionalProperties'];
    if (extra && typeof extra === 'object') {
      const keyPattern =
        ((s['propertyNames'] as Schema | undefined)?.['pattern'] as string | undefined) ?? '^[a-z_]{1,12}$';
      const keys = fc.oneof(
        fc.stringMatching(new RegExp(keyPattern)).filter((k) => k.length <= 64),
        fc.string(),
      );
      return fc
        .tuple(known, fc.dictionary(keys, arbitraryFor(extra as Schema, options, depth + 1), { maxKeys: 5 }))
        .map(([a, b]) => ({ ...b, ...a }));
    }
    // Sometimes a field the schema does not have (mass assignment).
    return fc
      .tuple(known, fc.option(fc.constantFrom('id', 'status', 'created_at', 'risk_score', '__proto__', 'x')))
      .map(([value, field]) => (field === null ? value : { ...value, [field]: 'injected' }));
  }
  if (type === 'array') {
    const items = (s['items'] ?? {}) as Schema;
    const maxItems = typeof s['maxItems'] === 'number' ? Math.min(s['maxItems'], 8) : 5;
    return fc.array(arbitraryFor(items, options, depth + 1), { maxLength: maxItems });
  }
  if (type === 'string') return stringFor(s, options);
  if (type === 'integer' || type === 'number') {
    const min = typeof s['minimum'] === 'number' ? s['minimum'] : -1000;
    const max = typeof s['maximum'] === 'number' ? s['maximum'] : 1000;
    const inRange =
      type === 'integer'
        ? fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31) })
        : fc.double({ min, max, noNaN: true });
    return fc.oneof(inRange, fc.constantFrom(min, max, min - 1, max + 1), hostileNumber);
  }
  if (type === 'boolean') return fc.boolean();
  return anyJson;
}

/** A query string value for a parameter: a valid one as text, or something hostile. */
export function queryValueFor(
  schema: Schema,
  options: SchemaArbitraryOptions,
): fc.Arbitrary<string | string[]> {
  const valid = validFor(resolve(schema, options), options, 0).map((v) =>
    typeof v === 'string' ? v : JSON.stringify(v),
  );
  return fc.oneof(
    { weight: 3, arbitrary: valid },
    { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_QUERY_VALUES) },
    { weight: 1, arbitrary: hostileString },
    { weight: 1, arbitrary: fc.array(valid, { minLength: 2, maxLength: 3 }) },
  );
}
