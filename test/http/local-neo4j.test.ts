import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import neo4j from 'neo4j-driver';
import { PortInUseError } from '../../src/errors/port-in-use.js';
import { freePort, LocalNeo4j, provideNeo4j } from '../../src/dev/local-neo4j.js';
import { nicenessOfThreads } from '../helpers/niceness.js';
import { until } from '../helpers/wait.js';

/**
 * Starts no app, so no useApp: what is tested is the embedded Neo4j launcher
 * (src/dev/local-neo4j.ts), each test starting a Neo4j of its own.
 */

/** Running, as opposed to gone or a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

describe('embedded Neo4j launcher', function () {
  this.timeout(120_000);
  let home: string;
  before(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'pas-launcher-'));
  });
  after(async () => {
    await rm(home, { recursive: true, force: true });
  });

  /** What starting the launcher with one of its ports held by another process ends in. */
  async function startWithPortTaken(which: 'bolt' | 'http'): Promise<{ error: unknown; port: number }> {
    const port = await freePort();
    const blocker = net.createServer().listen(port, '127.0.0.1');
    await new Promise((r) => blocker.once('listening', r));
    try {
      await LocalNeo4j.start({
        home,
        port: which === 'bolt' ? port : 0,
        ...(which === 'http' ? { httpPort: port } : {}),
        heap: '256m',
        pageCache: '16m',
        progress: () => undefined,
        timeoutMs: 60_000,
      });
      return { error: undefined, port };
    } catch (error) {
      return { error, port };
    } finally {
      blocker.close();
    }
  }

  it('reports a port already in use instead of hanging', async () => {
    const { error, port } = await startWithPortTaken('bolt');
    expect(error).to.be.instanceOf(PortInUseError);
    expect(String(error)).to.contain(String(port));
  });

  it('reports an HTTP (Neo4j Browser) port already in use, naming the setting to change', async () => {
    const { error, port } = await startWithPortTaken('http');
    expect(error).to.be.instanceOf(PortInUseError);
    expect(error).to.include({ port, listener: 'http' });
    expect(String(error)).to.contain('NEO4J_LOCAL_HTTP_PORT');
  });
  it('takes any free ports when asked for port 0, and says which', async () => {
    const messages: string[] = [];
    const db = await provideNeo4j(
      { uri: undefined, user: 'neo4j', password: '' },
      {
        provider: 'maven',
        dataDir: path.join(home, 'any-port'),
        port: 0,
        httpPort: 0,
        heap: '256m',
        pageCache: '16m',
        progress: (m) => messages.push(m),
      },
    );
    try {
      const bolt = Number(/^bolt:\/\/127\.0\.0\.1:(\d+)$/.exec(db.uri)?.[1]);
      const http = Number(/^http:\/\/127\.0\.0\.1:(\d+)\/browser\/$/.exec(db.browserUrl ?? '')?.[1]);
      expect(bolt).to.be.above(0);
      expect(http).to.be.above(0);
      expect(http).to.not.equal(bolt);
      const ready = messages.find((m) => m.startsWith('Neo4j ready at'));
      expect(ready).to.contain(db.uri).and.to.contain(db.browserUrl);
      expect((await fetch(db.browserUrl!)).status).to.equal(200);
    } finally {
      await db.stop();
    }
  });

  it('runs every thread of the database at the nice value it is given, those made later too', async () => {
    const db = await LocalNeo4j.start({
      home: path.join(home, 'lowered'),
      port: 0,
      heap: '256m',
      pageCache: '16m',
      niceness: 7,
      progress: () => undefined,
    });
    const driver = neo4j.driver(db.uri, neo4j.auth.basic('neo4j', ''));
    try {
      const ready = nicenessOfThreads(db.pid!);
      const threadsReady = readdirSync(`/proc/${db.pid!}/task`);
      expect(ready.length).to.be.above(10);
      expect(new Set(ready)).to.deep.equal(new Set([7]));
      // Work on several sessions at once makes the database start threads of its own for them.
      await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          driver.executeQuery('UNWIND range(1, 1000) AS n CREATE (:Lowered {n: n, at: $i})', { i }),
        ),
      );
      const made = readdirSync(`/proc/${db.pid!}/task`).filter((tid) => !threadsReady.includes(tid));
      expect(made, 'threads the database started for the work').to.not.be.empty;
      const after = nicenessOfThreads(db.pid!);
      expect(new Set(after)).to.deep.equal(new Set([7]));
    } finally {
      await driver.close();
      await db.stop();
    }
  });

  it('dies with its parent process: no orphan JVM', async () => {
    const script = `
      import { LocalNeo4j } from './src/dev/local-neo4j.ts';
      const db = await LocalNeo4j.start({ home: ${JSON.stringify(path.join(home, 'orphan'))}, port: 0, httpPort: 0, heap: '256m', pageCache: '16m', progress: () => {} });
      console.log('PID ' + db.pid);
      setInterval(() => {}, 1000);
    `;
    const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const jvmPid = await new Promise<number>((resolve, reject) => {
      let out = '';
      parent.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /PID (\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      parent.on('exit', () => reject(new Error(`parent exited early: ${out}`)));
    });
    expect(alive(jvmPid)).to.equal(true);
    parent.kill('SIGKILL');
    await until('the JVM to end with its parent', () => !alive(jvmPid), 30_000, 200).catch(() => undefined);
    expect(alive(jvmPid), 'the JVM outlived its parent').to.equal(false);
  });
});
