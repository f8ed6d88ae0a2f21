import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import { processSlot } from './cluster/process.js';
import { mainThreadSchedule, type ThreadSchedule } from './threads/thread.js';

export interface Metrics {
  registry: Registry;
  http: HttpMetrics;
  dbTransactions: Counter<'mode' | 'unit' | 'outcome'>;
  dbDuration: Histogram<'mode' | 'unit'>;
  dbSessionsActive: Gauge;
  dbPoolMax: Gauge;
  dbUp: Gauge;
  backgroundRuns: Counter<'task'>;
  webhookDeliveries: Counter<'outcome'>;
  webhookDeliverySeconds: Histogram;
  connectorSyncs: Counter<'outcome'>;
  connectorSyncSeconds: Histogram;
  pacingDuty: Gauge;
  pacedSeconds: Counter<'work'>;
}

/** One registry per app instance, so tests can build several apps in one process. */
export function createMetrics(): Metrics {
  const registry = new Registry();
  // Event-loop delay sampled every millisecond: the default (10 ms) hides stalls shorter than that
  // and adds its own period to every reading.
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 1 });
  const registers = [registry];
  // Which of a host's serving processes answered this scrape (src/cluster): each counts its own.
  new Gauge({
    name: 'service_process_info',
    help: "The serving process that answered: its slot among the host's processes, and its pid",
    labelNames: ['slot', 'pid'],
    registers,
  }).set({ slot: String(processSlot()), pid: String(process.pid) }, 1);
  observeMainThread(registers);
  return {
    registry,
    http: new HttpMetrics(registry),
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
    // How far this instance's background work has got: a pass of the webhook dispatcher that ends
    // sending nothing more says the outbox held nothing due for this instance when it looked.
    backgroundRuns: new Counter({
      name: 'background_task_runs_total',
      help: 'Runs of periodic background tasks this process finished, by task (webhooks.dispatch: a pass of the webhook dispatcher over the outbox)',
      labelNames: ['task'],
      registers,
    }),
    webhookDeliveries: new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery attempts this process made, by outcome (success: a 2xx; failure: no answer, a timeout or any other status)',
      labelNames: ['outcome'],
      registers,
    }),
    webhookDeliverySeconds: new Histogram({
      name: 'webhook_delivery_duration_seconds',
      help: 'How long a webhook delivery attempt took, until the receiver answered or the attempt failed',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    connectorSyncs: new Counter({
      name: 'connector_syncs_total',
      help: "Runs of connectors' snapshot syncs this process finished, by outcome (completed, failed: an attempt that will be retried counts too)",
      labelNames: ['outcome'],
      registers,
    }),
    connectorSyncSeconds: new Histogram({
      name: 'connector_sync_duration_seconds',
      help: "How long a run of a connector's snapshot sync took, from its job's start to its end",
      buckets: [0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600],
      registers,
    }),
    pacingDuty: new Gauge({
      name: 'background_pacing_duty',
      help: 'The share of time paced background work (syncs, reports, the privilege-risk refresh) gets now: 1 is full speed, lower while serving processes are held up',
      registers,
    }),
    pacedSeconds: new Counter({
      name: 'background_paced_seconds_total',
      help: 'Time paced background work paused to give way to serving processes, by work (scim.sync, reports.generate, risk.privileges, access-history.store)',
      labelNames: ['work'],
      registers,
    }),
  };
}

/**
 * The thread that runs the event loop: its time on a core, and its time ready but waiting for one
 * (Linux only; elsewhere neither series exists). The second is what a host short of cores costs
 * requests: the process CPU time counts every thread of the process, and the event-loop delay
 * hardly moves when the thread waits between its timers.
 */
function observeMainThread(registers: Registry[]): void {
  if (!mainThreadSchedule()) return;
  const counter = (name: string, help: string, read: (s: ThreadSchedule) => number) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        const schedule = mainThreadSchedule();
        if (!schedule) return;
        this.reset();
        this.inc(read(schedule));
      },
    });
  counter(
    'service_event_loop_thread_cpu_seconds_total',
    "Time the thread running this process's event loop spent on a core",
    (s) => s.running,
  );
  counter(
    'service_event_loop_thread_cpu_wait_seconds_total',
    "Time the thread running this process's event loop was ready to run and waited for a core: requests it held waited as long",
    (s) => s.waiting,
  );
}

const HTTP_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One method, route template and status: its request count and latency histogram. */
export class HttpSeries {
  count = 0;
  sum = 0;
  /** Observations per bucket (not cumulative; the exposition adds them up). */
  readonly buckets = new Float64Array(HTTP_BUCKETS.length);

  constructor(readonly labels: { method: string; route: string; status: string }) {}

  observe(seconds: number): void {
    this.count += 1;
    this.sum += seconds;
    for (let i = 0; i < HTTP_BUCKETS.length; i += 1) {
      if (seconds <= HTTP_BUCKETS[i]!) {
        this.buckets[i]! += 1;
        return;
      }
    }
  }
}

/**
 * The HTTP metrics: `http_requests_total` and `http_request_duration_seconds` by method, route
 * template and status, and `http_requests_in_flight`, exposed through the registry like any
 * other. Each request updates plain numbers of its series, found once per label set; the
 * registry's own counters would hash the labels again on every request, which on the decision
 * endpoint costs more than the rest of its bookkeeping together.
 */
export class HttpMetrics {
  inFlight = 0;
  /** Requests this process has begun to serve, ever: whether it served any in a while. */
  started = 0;
  private readonly series = new Map<string, HttpSeries>();

  constructor(registry: Registry) {
    const all = (): HttpSeries[] => [...this.series.values()];
    registry.registerMetric({
      name: 'http_requests_total',
      help: 'HTTP requests by method, route template and status',
      type: 'counter',
      get: () => ({
        name: 'http_requests_total',
        help: 'HTTP requests by method, route template and status',
        type: 'counter',
        aggregator: 'sum',
        values: all().map((s) => ({ labels: s.labels, value: s.count })),
      }),
    } as unknown as Metric);
    registry.registerMetric({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by method, route template and status',
      type: 'histogram',
      get: () => ({
        name: 'http_request_duration_seconds',
        help: 'HTTP request latency by method, route template and status',
        type: 'histogram',
        aggregator: 'sum',
        values: all().flatMap((s) => {
          let cumulative = 0;
          return [
            ...HTTP_BUCKETS.map((le, i) => ({
              metricName: 'http_request_duration_seconds_bucket',
              labels: { le, ...s.labels },
              value: (cumulative += s.buckets[i]!),
            })),
            {
              metricName: 'http_request_duration_seconds_bucket',
              labels: { le: '+Inf', ...s.labels },
              value: s.count,
            },
            { metricName: 'http_request_duration_seconds_sum', labels: s.labels, value: s.sum },
            { metricName: 'http_request_duration_seconds_count', labels: s.labels, value: s.count },
          ];
        }),
      }),
    } as unknown as Metric);
    const read = (): number => this.inFlight;
    new Gauge({
      name: 'http_requests_in_flight',
      help: 'HTTP requests being served',
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** The series of a method, route template and status (label sets are few: routes are templates). */
  of(method: string, route: string, status: number): HttpSeries {
    const key = `${method} ${route} ${status}`;
    let series = this.series.get(key);
    if (!series) {
      series = new HttpSeries({ method, route, status: String(status) });
      this.series.set(key, series);
    }
    return series;
  }
}

/** What the decision engine reports about itself, read when /metrics is scraped. */
export interface EngineReadings {
  indexVersion: () => number;
  /** Seconds from the commit of the oldest change of the last batch applied until the index held it. */
  indexLagSeconds: () => number;
  principals: () => number;
  activePolicies: () => number;
  pendingRecords: () => number;
  threadTasks: () => number;
  threadsReady: () => number;
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
  gauge(
    'decision_index_version',
    'Batches of changes applied to the in-memory decision index (and builds of it): it moves whenever the index does',
    readings.indexVersion,
  );
  gauge(
    'decision_index_lag_seconds',
    'How far behind the store the decision index was when it last applied changes: from the commit of the oldest change of that batch until decisions saw it',
    readings.indexLagSeconds,
  );
  gauge('decision_index_principals', 'Principals held by the decision index', readings.principals);
  gauge(
    'decision_index_active_policies',
    'Active policies held by the decision index',
    readings.activePolicies,
  );
  gauge(
    'decision_threads_ready',
    'Decision threads holding a replica of the index (batches, lists and simulations run there)',
    readings.threadsReady,
  );
  const threadTasks = readings.threadTasks;
  new Counter({
    name: 'decision_thread_tasks_total',
    help: 'Batches, AuthZEN evaluation lists and simulations decided on decision threads',
    registers,
    collect() {
      this.reset();
      this.inc(threadTasks());
    },
  });
  gauge(
    'decision_records_pending',
    'Decisions answered and not yet recorded in Neo4j',
    readings.pendingRecords,
  );
}

/** What the access history's recorder reports about itself (src/access-history/recorder.ts). */
export interface AccessHistoryReadings {
  batches: () => { event_loop: number; decision_thread: number };
  pending: () => number;
}

export function observeAccessHistory(metrics: Metrics, readings: AccessHistoryReadings): void {
  const registers = [metrics.registry];
  new Counter({
    name: 'access_history_batches_total',
    help: 'Batches of changes to the decision index whose access changes were computed, by where (event_loop, decision_thread)',
    labelNames: ['where'],
    registers,
    collect() {
      this.reset();
      for (const [where, n] of Object.entries(readings.batches())) this.inc({ where }, n);
    },
  });
  new Gauge({
    name: 'access_history_changes_pending',
    help: 'Access changes computed and not yet stored in Neo4j',
    registers,
    collect() {
      this.set(readings.pending());
    },
  });
}
