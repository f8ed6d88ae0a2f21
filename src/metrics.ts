import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  httpInFlight: Gauge;
  dbTransactions: Counter<'mode' | 'unit' | 'outcome'>;
  dbDuration: Histogram<'mode' | 'unit'>;
  dbSessionsActive: Gauge;
  dbPoolMax: Gauge;
  dbUp: Gauge;
}

/** One registry per app instance, so tests can build several apps in one process. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    httpInFlight: new Gauge({
      name: 'http_requests_in_flight',
      help: 'HTTP requests being served',
      registers,
    }),
    dbTransactions: new Counter({
      name: 'neo4j_transactions_total',
      help: 'Neo4j units of work by access mode, unit name and outcome',
      labelNames: ['mode', 'unit', 'outcome'],
      registers,
    }),
    dbDuration: new Histogram({
      name: 'neo4j_transaction_duration_seconds',
      help: 'Neo4j unit-of-work latency, session acquisition included',
      labelNames: ['mode', 'unit'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers,
    }),
    dbSessionsActive: new Gauge({
      name: 'neo4j_pool_connections_in_use',
      help: 'Neo4j sessions currently holding a pooled connection',
      registers,
    }),
    dbPoolMax: new Gauge({
      name: 'neo4j_pool_max_size',
      help: 'Configured maximum size of the Neo4j connection pool',
      registers,
    }),
    dbUp: new Gauge({
      name: 'neo4j_up',
      help: '1 while the database answers, 0 while it is unreachable',
      registers,
    }),
  };
}

/** What the decision engine reports about itself, read when /metrics is scraped. */
export interface EngineReadings {
  indexVersion: () => number;
  principals: () => number;
  activePolicies: () => number;
  pendingRecords: () => number;
}

export function observeEngine(metrics: Metrics, readings: EngineReadings): void {
  const registers = [metrics.registry];
  const gauge = (name: string, help: string, read: () => number): void => {
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read());
      },
    });
  };
  gauge('decision_index_version', 'Changes applied to the in-memory decision index', readings.indexVersion);
  gauge('decision_index_principals', 'Principals held by the decision index', readings.principals);
  gauge(
    'decision_index_active_policies',
    'Active policies held by the decision index',
    readings.activePolicies,
  );
  gauge(
    'decision_records_pending',
    'Decisions answered and not yet recorded in Neo4j',
    readings.pendingRecords,
  );
}
