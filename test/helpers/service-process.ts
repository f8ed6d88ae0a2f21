import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../../src/dev/local-neo4j.js';
import { ADMIN_CLIENT_ID, ADMIN_CLIENT_SECRET, TEST_KEY_ENCRYPTION_KEY } from './app.js';
import { HttpClient } from './http.js';
import { eventually } from './wait.js';

/** The service as its own process (`src/main.ts`), so that a test can kill it outright. */
export interface ServiceProcess {
  port: number;
  http: HttpClient;
  /** What the process wrote to stdout and stderr, the last part of it. */
  output(): string;
  /** Resolves with the signal that ended the process, or its exit code. */
  exited: Promise<NodeJS.Signals | number | null>;
  /** SIGKILL, as a crash would end it: nothing of the shutdown path runs. */
  crash(): Promise<void>;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** Every process started here that has not exited yet, so that a failing test still ends them. */
const running = new Set<ChildProcess>();
// A test run that ends without its `after` hooks (interrupted, or exiting on an error) still
// takes the services it started with it.
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

const OUTPUT_KEPT = 64_000;

/**
 * Starts the service on Neo4j at `neo4jUri` with the test admin client, the test key-encryption
 * key and a fast secret hash (as startTestApp does), and waits until `/readyz` answers 200. The
 * database is used as it is: empty it first when the bootstrap client must be created.
 */
export async function startServiceProcess(
  neo4jUri: string,
  env: Record<string, string> = {},
  readyWithinMs = 60_000,
): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      NEO4J_URI: neo4jUri,
      KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
      BOOTSTRAP_CLIENT_ID: ADMIN_CLIENT_ID,
      BOOTSTRAP_CLIENT_SECRET: ADMIN_CLIENT_SECRET,
      CLIENT_SECRET_HASH_COST: '10',
      RATE_LIMIT_STANDARD: '1000000',
      AUTH_FAILURE_LIMIT: '1000',
      AUTH_FAILURE_IP_LIMIT: '100000',
      INDEX_SNAPSHOT: 'off',
      // One process unless a test asks for several (the default is one per core).
      WORKERS: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let out = '';
  const keep = (d: Buffer): void => {
    out += d.toString();
    if (out.length > 2 * OUTPUT_KEPT) out = out.slice(-OUTPUT_KEPT);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => {
    child.once('exit', (code, signal) => {
      running.delete(child);
      resolve(signal ?? code);
    });
  });
  const stop = async (graceMs = 10_000): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    try {
      await exited;
    } finally {
      clearTimeout(timer);
    }
  };
  const service: ServiceProcess = {
    port,
    http: new HttpClient(`http://127.0.0.1:${port}`),
    output: () => out.slice(-OUTPUT_KEPT),
    exited,
    crash: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
    stop,
  };
  let gone = false;
  void exited.then(() => (gone = true));
  const readyz = (): Promise<number> =>
    fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
  // Ready, or gone (then there is nothing to wait for).
  const { value: status } = await eventually(readyz, (s) => s === 200 || gone, readyWithinMs, 100).catch(
    async () => ({ value: await readyz() }),
  );
  if (status === 200) return service;
  await service.crash();
  throw new Error(`the service did not become ready (readyz ${status}):\n${service.output()}`);
}

/** Kills whatever service process is still running (a test's `after`, whatever happened in it). */
export async function killServiceProcesses(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}
