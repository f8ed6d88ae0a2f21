import cluster, { type Worker } from 'node:cluster';
import { once } from 'node:events';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { RateLimiterClusterMaster } from 'rate-limiter-flexible';
import type { Config } from '../config/config.js';
import { neo4jBrowser, provideNeo4j, type Neo4jEndpoint } from '../dev/local-neo4j.js';
import { startMetricsServer, type Exposition, type MetricsServer } from '../metrics-server.js';
import type { Logger } from '../logging/logger.js';
import {
  BACKGROUND_SLOT,
  isProcessMessage,
  PART_ENV,
  SLOT_ENV,
  type ProcessMessage,
  type ProcessMetrics,
  type ProcessPart,
} from './process.js';

/** A process that stops this soon after it started has failed to start: its replacement waits longer. */
const EARLY_EXIT_MS = 10_000;
const MAX_RESTART_DELAY_MS = 30_000;
/** Beyond the service's own drain, what a process may take to close before it is killed. */
const STOP_MARGIN_MS = 15_000;
/** How long a scrape of METRICS_PORT waits for the processes' answers; one that is later is left out. */
const SCRAPE_WAIT_MS = 3_000;

/**
 * The primary of `WORKERS` serving processes (node:cluster), and of a background process where
 * `BACKGROUND_PROCESS` asks for one: it provides the database (starting a local Neo4j where none
 * is configured) and hands its address to each process, starts the first process alone (it
 * applies the schema migrations and the bootstrap client: the background process where there is
 * one) and the others once it is ready, shares the listening socket among the serving ones,
 * passes on to the background process that a serving one queued a job, counts the rate limits for
 * all of them when there is no Redis to share them in, replaces a process that dies, and at a stop
 * drains the serving processes, then the background one, before the database goes. It serves no
 * request itself, but with METRICS_PORT it listens there and answers a scrape with the metrics of
 * every process it asks for them.
 */
export async function runPrimary(config: Config, logger: Logger): Promise<void> {
  const started = Date.now();
  const exit = (code: number): void => logger.flush(() => process.exit(code));
  let neo4j: Neo4jEndpoint;
  try {
    neo4j = await provideNeo4j(config.neo4j, { ...config.localNeo4j, progress: (m) => logger.info(m) });
  } catch (err) {
    logger.fatal({ err }, `cannot start: ${err instanceof Error ? err.message : String(err)}`);
    exit(1);
    return;
  }
  // Without Redis, several serving processes' rate limits are counted here, once for all of them.
  if (!config.redisUrl && config.workers > 1) new RateLimiterClusterMaster();

  const slots = new Map<number, Worker>();
  const restarts = new Map<number, number>();
  /** Processes that said they are ready: only those are asked for their metrics. */
  const ready = new WeakSet<Worker>();
  /** The scrapes of METRICS_PORT waiting for the processes' answers, by request id. */
  const scrapes = new Map<number, (slot: number, metrics: ProcessMetrics) => void>();
  let scrapeIds = 0;
  let metricsServer: MetricsServer | undefined;
  let stopping = false;
  const env = {
    NEO4J_URI: neo4j.uri,
    NEO4J_USER: neo4j.user,
    NEO4J_PASSWORD: neo4j.password,
  };

  const background = config.backgroundProcess;
  const partOf = (slot: number): ProcessPart =>
    slot === BACKGROUND_SLOT ? 'background' : background ? 'serving-only' : 'serving';
  const nameOf = (slot: number): string => (slot === BACKGROUND_SLOT ? 'background' : 'serving');

  /** Starts the process of `slot`; resolves once it is ready, rejects if it ends first. */
  const fork = (slot: number): Promise<void> => {
    const worker = cluster.fork({ ...env, [SLOT_ENV]: String(slot), [PART_ENV]: partOf(slot) });
    const forkedAt = Date.now();
    slots.set(slot, worker);
    const readiness = new Promise<void>((resolve, reject) => {
      worker.on('message', (message: unknown) => {
        if (!isProcessMessage(message)) return;
        if (message.type === 'ready') {
          ready.add(worker);
          resolve();
        }
        if (message.type === 'job-queued') slots.get(BACKGROUND_SLOT)?.send(message);
        if (message.type === 'loop-delay') slots.get(BACKGROUND_SLOT)?.send({ ...message, slot });
        if (message.type === 'changes') {
          for (const [other, to] of slots) if (other !== slot && to.isConnected()) to.send(message);
        }
        if (message.type === 'metrics') scrapes.get(message.id)?.(slot, message.metrics);
      });
      worker.once('exit', (code, signal) => {
        reject(new Error(`${nameOf(slot)} process ${slot} ended before it was ready (${signal ?? code})`));
        if (slots.get(slot) === worker) slots.delete(slot);
        if (stopping) return;
        // A process that dies is replaced; one that keeps dying at start, after longer and longer waits.
        const early = Date.now() - forkedAt < EARLY_EXIT_MS;
        const delay = early ? Math.min(MAX_RESTART_DELAY_MS, 2 * (restarts.get(slot) ?? 500)) : 0;
        restarts.set(slot, early ? delay : 500);
        logger.error(
          { slot, pid: worker.process.pid, code, signal, restart_in_ms: delay },
          `a ${nameOf(slot)} process ended; it is replaced`,
        );
        setTimeout(() => {
          if (!stopping) fork(slot).catch(() => undefined);
        }, delay).unref();
      });
    });
    logger.info({ slot, pid: worker.process.pid }, `${nameOf(slot)} process started`);
    return readiness;
  };

  /** A scrape of METRICS_PORT: every ready process's metrics, each series labelled with its slot. */
  const scrape = async (): Promise<Exposition> => {
    const id = (scrapeIds += 1);
    const asked = [...slots.entries()].filter(([, worker]) => ready.has(worker) && !worker.isDead());
    const answers: { slot: number; metrics: ProcessMetrics }[] = [];
    await new Promise<void>((resolve) => {
      let waiting = asked.length;
      const timer = setTimeout(resolve, SCRAPE_WAIT_MS);
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      scrapes.set(id, (slot, metrics) => {
        answers.push({ slot, metrics });
        waiting -= 1;
        if (waiting === 0) done();
      });
      for (const [, worker] of asked) {
        try {
          worker.send({ channel: 'pas', type: 'metrics-request', id } satisfies ProcessMessage);
        } catch {
          waiting -= 1; // it is going away: its successor answers the next scrape
        }
      }
      if (waiting <= 0) done();
    });
    scrapes.delete(id);
    const registry = exposeProcesses(answers.sort((a, b) => a.slot - b.slot));
    return { contentType: registry.contentType, text: await registry.metrics() };
  };

  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      for (const worker of slots.values()) worker.process.kill('SIGKILL');
      exit(1);
      return;
    }
    stopping = true;
    logger.info({ signal, processes: slots.size }, 'shutting down: draining every process');
    await metricsServer?.close();
    // The serving processes first: the background one then stores what they leave behind.
    const last = slots.get(BACKGROUND_SLOT);
    await drain([...slots.values()].filter((worker) => worker !== last));
    if (last) await drain([last]);
    await neo4j.stop().catch((err: unknown) => logger.error({ err }, 'stopping the database failed'));
    logger.info('stopped');
    exit(0);
  };
  /** Asks each process to stop and waits until it has, killing one that outlasts the margin. */
  const drain = async (workers: Worker[]): Promise<void> => {
    await Promise.all(
      workers.map(async (worker) => {
        if (worker.isDead()) return;
        const exited = once(worker, 'exit');
        worker.send({ channel: 'pas', type: 'stop' } satisfies ProcessMessage);
        const timer = setTimeout(
          () => worker.process.kill('SIGKILL'),
          config.shutdownTimeoutMs + STOP_MARGIN_MS,
        );
        await exited;
        clearTimeout(timer);
      }),
    );
  };
  process.on('SIGTERM', (signal) => void stop(signal));
  process.on('SIGINT', (signal) => void stop(signal));

  try {
    const first = background ? BACKGROUND_SLOT : 1;
    await fork(first);
    const rest = Array.from({ length: config.workers }, (_, i) => i + 1).filter((slot) => slot !== first);
    await Promise.all(rest.map(fork));
    if (config.metrics.port !== undefined) {
      metricsServer = await startMetricsServer({
        port: config.metrics.port,
        host: config.host,
        token: config.metrics.token,
        scrape,
        logger,
      });
    }
  } catch (err) {
    if (stopping) return;
    logger.fatal({ err }, `cannot start: ${err instanceof Error ? err.message : String(err)}`);
    stopping = true;
    for (const worker of slots.values()) worker.process.kill('SIGTERM');
    await neo4j.stop().catch(() => undefined);
    exit(1);
    return;
  }
  logger.info(
    {
      processes: config.workers,
      background,
      port: config.port,
      ...(metricsServer ? { metrics_port: metricsServer.address.port } : {}),
      startup_ms: Date.now() - started,
    },
    `serving with ${config.workers} process${config.workers === 1 ? '' : 'es'}${background ? ' and a background process' : ''}`,
  );
  if (metricsServer) {
    logger.info(
      { metrics_port: metricsServer.address.port },
      `metrics of every process at http://${displayHost(config.host)}:${metricsServer.address.port}/metrics`,
    );
  }
  // The processes were handed the database's address only: where its Browser is, this process says.
  const browser = neo4jBrowser(neo4j);
  logger.info({ neo4j_browser: browser.url, neo4j_source: neo4j.source }, browser.message);
}

/** A host to show in an address: the wildcard is reached as localhost. */
function displayHost(host: string): string {
  return host === '0.0.0.0' || host === '::' ? 'localhost' : host;
}

/**
 * The metrics of a host's processes as one exposition, which the primary serves on METRICS_PORT:
 * every series carries the slot of the process it comes from (`service_process_info` names each
 * process with its pid), so that nothing of one process is added to another's or hides it, and a
 * query sums them where it wants a total.
 */
function exposeProcesses(processes: { slot: number; metrics: ProcessMetrics }[]): Registry {
  const labelled = processes.map(({ slot, metrics }) =>
    metrics.map((metric) => ({
      ...metric,
      // The slot makes every series unique, so nothing is left to aggregate: each is kept as it is.
      aggregator: 'first' as const,
      values: metric.values.map((value) => ({ ...value, labels: { ...value.labels, slot: String(slot) } })),
    })),
  );
  return AggregatorRegistry.aggregate(labelled);
}
