import neo4j, {
  Neo4jError,
  isDate,
  isDateTime,
  isDuration,
  isLocalDateTime,
  isNode,
  isRelationship,
  type Driver,
} from 'neo4j-driver';

/** Neo4j error codes that mean the database cannot be reached, rather than that it refused. */
export const CONNECTIVITY_CODES = new Set([
  neo4j.error.SERVICE_UNAVAILABLE,
  neo4j.error.SESSION_EXPIRED,
  'Neo.TransientError.General.DatabaseUnavailable',
  'Neo.ClientError.Database.DatabaseNotFound',
]);

/** Whether `err` says the database cannot be reached (so waiting, not giving up, is the answer). */
export function isConnectivityError(err: unknown): boolean {
  return err instanceof Neo4jError && CONNECTIVITY_CODES.has(err.code);
}

export interface DriverOptions {
  maxPoolSize: number;
  connectionTimeoutMs: number;
  txRetryMs: number;
}

/**
 * A driver as the service configures every one it opens, the main thread's and its worker
 * threads': plain numbers, no telemetry, no driver logging beyond errors, which it swallows (the
 * service reports what a failure means itself). Options left out take the driver's defaults.
 */
export function createDriver(
  uri: string,
  user: string,
  password: string,
  opts: Partial<DriverOptions> = {},
): Driver {
  const auth = password === '' ? undefined : neo4j.auth.basic(user, password);
  return neo4j.driver(uri, auth, {
    ...(opts.maxPoolSize !== undefined ? { maxConnectionPoolSize: opts.maxPoolSize } : {}),
    ...(opts.connectionTimeoutMs !== undefined
      ? {
          connectionTimeout: opts.connectionTimeoutMs,
          connectionAcquisitionTimeout: opts.connectionTimeoutMs + 2_000,
        }
      : {}),
    ...(opts.txRetryMs !== undefined ? { maxTransactionRetryTime: opts.txRetryMs } : {}),
    disableLosslessIntegers: true,
    telemetryDisabled: true,
    userAgent: 'principals-access-service',
    logging: { level: 'error', logger: () => undefined },
  });
}

/** Integers become Neo4j integers (JS numbers would arrive as floats); the rest passes as is. */
export function toNeo4jParams(value: unknown): never {
  return convertParam(value) as never;
}

function convertParam(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? neo4j.int(value) : value;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i += 1) out[i] = convertParam(value[i]);
    return out;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const key in value) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = convertParam(v);
  }
  return out;
}

/** Neo4j values as plain JS: temporals as RFC 3339 strings, nodes as their properties. */
export function fromNeo4j(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'object') return value;
  if (neo4j.isInt(value)) return value.toNumber();
  if (isDateTime(value) || isLocalDateTime(value) || isDate(value)) {
    return value.toStandardDate().toISOString();
  }
  if (isDuration(value)) return value.toString();
  // Byte arrays stay as they come (Int8Array).
  if (ArrayBuffer.isView(value)) return value;
  if (isNode(value) || isRelationship(value)) return fromNeo4j(value.properties);
  if (Array.isArray(value)) return value.map(fromNeo4j);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = fromNeo4j(v);
  return out;
}
