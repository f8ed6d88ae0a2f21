import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { freePort } from '../../src/dev/local-neo4j.js';
import { edgeRoutes } from '../helpers/edge-routes.js';
import { TEST_KEY_ENCRYPTION_KEY } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import { until } from '../helpers/wait.js';

/**
 * The in-process app starts through useApp; the rest runs `src/main.ts` as a process of its own,
 * as `npm start` does, since what it checks (the start path, SIGTERM, the exit code and message of
 * a failed boot) belongs to the process.
 */

function runMain(env: Record<string, string>): {
  exited: Promise<number | null>;
  output: () => string;
  kill: (signal: NodeJS.Signals) => void;
} {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      LOG_LEVEL: 'info',
      // The suite's store holds signing keys sealed with the test key-encryption key.
      KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
      CLIENT_SECRET_HASH_COST: '10',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return {
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
    output: () => out,
    kill: (signal) => child.kill(signal),
  };
}

describe('process lifecycle', function () {
  this.timeout(60_000);

  describe('in process', () => {
    // The request is held inside its handler until shutdown has begun.
    let arrived!: () => void;
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const onSlow = async (): Promise<void> => {
      arrived();
      await released;
    };
    // The test stops the app itself; the fixture's close then finds it stopped.
    const fx = useApp({ extraRoutes: edgeRoutes(() => fx.app.runtime.db, { onSlow }) });

    it('lets in-flight requests finish on shutdown and refuses new connections after', async () => {
      const app = fx.app;
      const refuses = async (): Promise<boolean> =>
        fetch(`${app.http.baseUrl}/healthz`).then(
          () => false,
          () => true,
        );
      const inFlight = app.http.get('/v1/_edge/slow?ms=0');
      await arrival;
      const stopping = app.close();
      try {
        expect(app.runtime.draining, 'shutdown has begun').to.equal(true);
        expect(await refuses(), 'a new connection while the request is in flight').to.equal(true);
      } finally {
        release();
      }
      const res = await inFlight;
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ waited: 0 });
      await stopping;
      expect(await refuses(), 'a new connection once stopped').to.equal(true);
    });
  });

  it('npm start path: boots on the configured Neo4j, serves, and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const proc = runMain({ PORT: String(port), NEO4J_URI: process.env['NEO4J_URI']! });
    const ready = async (): Promise<boolean> =>
      (await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) === 200;
    await until('/readyz to answer 200', ready, 30_000, 100).catch((err: Error) => {
      throw new Error(`${err.message}\n${proc.output()}`);
    });
    const doc = (await (await fetch(`http://127.0.0.1:${port}/v1/openapi.json`)).json()) as {
      openapi: string;
    };
    expect(doc.openapi).to.equal('3.1.0');
    proc.kill('SIGTERM');
    expect(await proc.exited).to.equal(0);
    expect(proc.output()).to.contain('"msg":"stopped"');
  });

  it('stops at boot with a message naming a bad variable', async () => {
    const proc = runMain({ PORT: 'not-a-port' });
    expect(await proc.exited).to.equal(1);
    expect(proc.output()).to.contain('PORT="not-a-port" is not valid');
  });

  it('reports an HTTP port already in use instead of hanging', async () => {
    const port = await freePort();
    const blocker = (await import('node:net')).createServer().listen(port, '0.0.0.0');
    await new Promise((r) => blocker.once('listening', r));
    try {
      const proc = runMain({ PORT: String(port), NEO4J_URI: process.env['NEO4J_URI']! });
      expect(await proc.exited).to.equal(1);
      expect(proc.output()).to.contain(`port ${port} is already in use`);
    } finally {
      blocker.close();
    }
  });
});
