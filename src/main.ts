import cluster from 'node:cluster';
import { runPrimary } from './cluster/primary.js';
import {
  announceChanges,
  announceJobQueued,
  announceLoopDelay,
  announceReady,
  onChanges,
  onJobQueued,
  onLoopDelay,
  onMetricsRequest,
  onPrimaryStop,
  processRole,
} from './cluster/process.js';
import { ConfigError, loadConfig, type Config } from './config/config.js';
import { neo4jBrowser, provideNeo4j, type Neo4jEndpoint } from './dev/local-neo4j.js';
import { startMetricsServer } from './metrics-server.js';
import { createLogger } from './logging/logger.js';
import { LoopDelay } from './pacing/loop-delay.js';
import { createRuntime, type Runtime } from './runtime.js';
import { startServer } from './http/server.js';
import { runProcessInBackground } from './threads/thread.js';
import { startTracing, stopTracing } from './tracing/tracing.js';
import { SERVICE_VERSION } from './version.js';

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`principals-access-service: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

async function main(): Promise<void> {
  const config = readConfig();
  if (cluster.isPrimary && (config.workers > 1 || config.backgroundProcess)) {
    await runPrimary(config, createLogger(config.logLevel).child({ role: 'primary' }));
    return;
  }
  const role = processRole();
  // A process answering no request gives the cores to those that do, wherever they are all busy.
  if (!role.serves) runProcessInBackground();
  const { slot } = role;
  if (config.tracing.enabled) {
    await startTracing({
      serviceName: config.tracing.serviceName,
      serviceVersion: SERVICE_VERSION,
      processRole: !cluster.isWorker ? 'single' : role.serves ? 'serving' : 'background',
      sampleRatio: config.tracing.sampleRatio,
    });
  }
  const logger = cluster.isWorker
    ? createLogger(config.logLevel).child(role.serves ? { slot } : { slot, role: 'background' })
    : createLogger(config.logLevel);
  const started = Date.now();
  /** Exits once the log lines written so far are out. */
  const exit = (code: number): void => {
    logger.flush(() => process.exit(code));
  };

  let neo4j: Neo4jEndpoint | undefined;
  let runtime: Runtime | undefined;
  /** What stops this process's work: its HTTP server (which closes the runtime) or, serving none, the runtime. */
  let close: () => Promise<void>;
  try {
    neo4j = await provideNeo4j(config.neo4j, {
      ...config.localNeo4j,
      progress: (message) => logger.info(message),
    });
    runtime = await createRuntime({
      config,
      logger,
      neo4j,
      leads: role.leads,
      background: role.background,
      ...(role.background ? {} : { jobQueued: announceJobQueued }),
      ...(role.serves ? {} : { loopDelays: 'reported' as const }),
      ...(cluster.isWorker ? { siblings: { send: announceChanges, listen: onChanges } } : {}),
    });
    // One of several processes: the primary serves METRICS_PORT with every process's metrics.
    const { registry } = runtime.metrics;
    onMetricsRequest(() => registry.getMetricsAsJSON());
    if (role.serves) {
      const server = await startServer(runtime, { ...config, logger });
      close = () => server.shutdown();
      // Beside a background process, this process says how held up it is, so that the background
      // work gives way to its requests (src/pacing).
      if (!role.background && config.pacing.enabled) {
        const { http } = runtime.metrics;
        const loop = new LoopDelay(announceLoopDelay, () => http.started);
        loop.start();
        close = () => {
          loop.stop();
          return server.shutdown();
        };
      }
      const host = config.host === '0.0.0.0' ? 'localhost' : config.host;
      if (config.metrics.port !== undefined && !cluster.isWorker) {
        const metrics = await startMetricsServer({
          port: config.metrics.port,
          host: config.host,
          token: config.metrics.token,
          scrape: async () => ({ contentType: registry.contentType, text: await registry.metrics() }),
          logger,
        });
        close = () => metrics.close().then(() => server.shutdown());
        logger.info(
          { metrics_port: metrics.address.port },
          `metrics at http://${host}:${metrics.address.port}/metrics`,
        );
      }
      logger.info(
        {
          port: server.address.port,
          neo4j: neo4j.uri,
          neo4j_source: neo4j.source,
          startup_ms: Date.now() - started,
        },
        `listening on http://${host}:${server.address.port}`,
      );
    } else {
      const background = runtime;
      close = () => background.close();
      onJobQueued(() => background.jobs.wake());
      onLoopDelay((from, delayMs) => background.pacer.report(`slot ${from}`, delayMs));
      // A job queued while this process started, before it listened, is looked for now.
      background.jobs.wake();
      logger.info(
        { neo4j: neo4j.uri, startup_ms: Date.now() - started },
        'background process ready: syncs, reports, webhook deliveries, risk and the access history run here',
      );
    }
  } catch (err) {
    logger.fatal({ err }, `cannot start: ${err instanceof Error ? err.message : String(err)}`);
    await runtime?.close().catch(() => undefined);
    await neo4j?.stop().catch(() => undefined);
    exit(1);
    return;
  }
  // One of several processes was only handed the database's address: its primary says this.
  if (role.serves && !cluster.isWorker) {
    const browser = neo4jBrowser(neo4j);
    logger.info({ neo4j_browser: browser.url, neo4j_source: neo4j.source }, browser.message);
  }

  announceReady();
  let stopping = false;
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    if (signals > 1) {
      logger.warn({ signal }, 'second signal: exiting now');
      exit(1);
      return;
    }
    shutDown(signal);
  };
  const shutDown = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'shutting down');
    const endpoint = neo4j;
    close()
      .then(() => endpoint.stop())
      // The spans of the last requests and jobs go out before the process does.
      .then(() => stopTracing())
      .then(
        () => {
          logger.info('stopped');
          exit(0);
        },
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          exit(1);
        },
      );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // One of several processes: the primary asks it to stop (so does its going away).
  onPrimaryStop(() => shutDown('asked by the primary'));
}

void main();
