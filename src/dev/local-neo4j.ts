import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { projectRoot } from '../paths.js';
import { within } from '../time.js';
import { PortInUseError } from '../errors/port-in-use.js';
import { lowerProcessPriority } from '../threads/thread.js';

/**
 * A Neo4j the service can talk to: the configured one, a Docker container, or an embedded Neo4j
 * 5.26 run from Maven-resolved jars (tools/neo4j), which also serves Neo4j Browser. Whoever asked
 * for it stops it.
 */
export interface Neo4jEndpoint {
  uri: string;
  user: string;
  password: string;
  source: 'configured' | 'docker' | 'maven';
  /** Neo4j Browser served by this Neo4j, when the service started it (e.g. http://127.0.0.1:7474/browser/). */
  browserUrl?: string;
  stop(): Promise<void>;
}

export interface LocalNeo4jOptions {
  provider: 'auto' | 'docker' | 'maven';
  /** Where the database keeps its files; `undefined` for a throwaway directory. */
  dataDir: string | undefined;
  /** Bolt port; 0 picks a free one. */
  port: number;
  /** HTTP port, serving Neo4j Browser; 0 picks a free one; left out, the embedded Neo4j speaks Bolt only. */
  httpPort?: number;
  heap: string;
  pageCache: string;
  /**
   * The nice value the embedded Neo4j runs at (0, unset: the service's own). Above 0, where the
   * host's cores are all busy, the serving processes get them before the database's writes.
   */
  niceness?: number;
  progress: (message: string) => void;
}

export class Neo4jUnavailableError extends Error {
  override name = 'Neo4jUnavailableError';
}

/** The message of a local Neo4j's taken port, naming the setting that moves it. */
function portTaken(port: number, connector: 'bolt' | 'http'): PortInUseError {
  return new PortInUseError(
    port,
    connector,
    connector === 'bolt'
      ? `port ${port} is already in use, so a local Neo4j cannot listen there. ` +
          `If a Neo4j is already running on it, set NEO4J_URI=bolt://localhost:${port}; ` +
          'otherwise choose another port with NEO4J_LOCAL_PORT.'
      : `port ${port} is already in use, so a local Neo4j cannot serve HTTP (Neo4j Browser) there. ` +
          'Stop what is listening on it, or choose another port with NEO4J_LOCAL_HTTP_PORT.',
  );
}

const INSTALL_HINT =
  'No Neo4j is available. Do one of: set NEO4J_URI (and NEO4J_USER / NEO4J_PASSWORD) to a Neo4j 5 server; ' +
  'start a Docker engine (testcontainers runs neo4j:5.26 for you); or install Java 17+ and Maven ' +
  '(Debian/Ubuntu: apt-get install openjdk-17-jdk-headless maven) so the embedded Neo4j in tools/neo4j can run.';

export async function provideNeo4j(
  configured: { uri: string | undefined; user: string; password: string },
  options: LocalNeo4jOptions,
): Promise<Neo4jEndpoint> {
  if (configured.uri) {
    return { ...configured, uri: configured.uri, source: 'configured', stop: () => Promise.resolve() };
  }
  if (options.provider !== 'maven' && (await dockerAnswers())) {
    return startDockerNeo4j(options);
  }
  if (options.provider === 'docker') {
    throw new Neo4jUnavailableError('NEO4J_PROVIDER=docker, but no Docker engine answers. ' + INSTALL_HINT);
  }
  if (hasCommand('java') && hasCommand('javac') && hasCommand('mvn')) {
    return startMavenNeo4j(options);
  }
  throw new Neo4jUnavailableError(INSTALL_HINT);
}

function hasCommand(command: string): boolean {
  const probe = spawnSync(command, ['-version'], { stdio: 'ignore' });
  return probe.error === undefined;
}

/** Whether a Docker engine answers here (testcontainers can start containers). */
export async function dockerAnswers(): Promise<boolean> {
  const sockets = [
    process.env['DOCKER_HOST'],
    '/var/run/docker.sock',
    path.join(os.homedir(), '.docker/run/docker.sock'),
  ].filter((s): s is string => Boolean(s));
  if (!sockets.some((s) => s.includes('://') || existsSync(s))) return false;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await withTimeout(getContainerRuntimeClient(), 10_000, 'docker probe');
    return true;
  } catch {
    return false;
  }
}

/** The password the service gives a Neo4j container it starts (kept across restarts with a data directory). */
const DOCKER_PASSWORD = 'pas-local-password';

async function startDockerNeo4j(options: LocalNeo4jOptions): Promise<Neo4jEndpoint> {
  const { Neo4jContainer } = await import('@testcontainers/neo4j');
  options.progress('starting Neo4j 5.26 in Docker (testcontainers)');
  let container = new Neo4jContainer('neo4j:5.26-community').withPassword(DOCKER_PASSWORD);
  if (options.dataDir) {
    const dir = path.resolve(options.dataDir, 'neo4j-docker');
    await mkdir(dir, { recursive: true });
    container = container.withBindMounts([{ source: dir, target: '/data' }]);
  }
  const started = await container.start();
  return {
    uri: started.getBoltUri(),
    user: started.getUsername(),
    password: started.getPassword(),
    source: 'docker',
    browserUrl: `${started.getHttpUri()}/browser/`,
    stop: async () => {
      await started.stop();
    },
  };
}

/**
 * Where Neo4j Browser is and how to sign in to it, for the start-up log, whichever way the
 * database came: the embedded Neo4j runs without authentication; a container started here takes
 * the password the service gave it, which opens that container and nothing else, so it may be
 * shown; a configured Neo4j is the operator's own, whose password is never repeated.
 */
export function neo4jBrowser(neo4j: Neo4jEndpoint): { url: string | undefined; message: string } {
  const uri = withoutCredentials(neo4j.uri);
  switch (neo4j.source) {
    case 'maven':
      return {
        url: neo4j.browserUrl,
        message: neo4j.browserUrl
          ? `Neo4j Browser at ${neo4j.browserUrl}: connect URL ${uri}, authentication "No authentication" ` +
            '(the embedded Neo4j listens on 127.0.0.1 only)'
          : `the embedded Neo4j at ${uri} serves no Neo4j Browser (its HTTP port is off)`,
      };
    case 'docker':
      return {
        url: neo4j.browserUrl,
        message:
          `Neo4j Browser at ${neo4j.browserUrl ?? '(no HTTP port)'}: connect URL ${uri}, user ${neo4j.user}, ` +
          `password ${neo4j.password} (set by the service for the container it started; it opens that container only)`,
      };
    case 'configured':
      return {
        url: undefined,
        message:
          `Neo4j at ${uri} is your own (NEO4J_URI): its Neo4j Browser is wherever that server serves it ` +
          `(often port 7474 of its host); sign in as ${neo4j.user} with ` +
          (neo4j.password === ''
            ? 'authentication "No authentication" (NEO4J_PASSWORD is empty)'
            : 'the NEO4J_PASSWORD you configured'),
      };
  }
}

/** A URI as the log may show it: any user and password written into it left out. */
function withoutCredentials(uri: string): string {
  return uri.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, '$1');
}

// ---------------------------------------------------------------------------------------------
// The embedded Neo4j from Maven

const toolsDir = (): string => path.join(projectRoot(), 'tools', 'neo4j');

/** The JVM flags Neo4j's own neo4j.conf sets, which an embedded Neo4j needs just the same. */
const JVM_FLAGS = [
  '-XX:+UseG1GC',
  '-XX:-OmitStackTraceInFastThrow',
  '-XX:+DisableExplicitGC',
  '-XX:+UnlockExperimentalVMOptions',
  '-XX:+TrustFinalNonStaticFields',
  '-Djdk.nio.maxCachedBufferSize=1024',
  '-Dio.netty.tryReflectionSetAccessible=true',
  '-Dlog4j2.disable.jmx=true',
  '--add-opens=java.base/java.nio=ALL-UNNAMED',
  '--add-opens=java.base/java.io=ALL-UNNAMED',
  '--add-opens=java.base/sun.nio.ch=ALL-UNNAMED',
  '--add-opens=java.base/java.lang=ALL-UNNAMED',
];

async function sha256File(file: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** Resolves the harness's jars through Maven once, then reuses the recorded classpath. */
export async function resolveClasspath(progress: (m: string) => void): Promise<string> {
  const dir = toolsDir();
  const target = path.join(dir, 'target');
  const cpFile = path.join(target, 'classpath.txt');
  const stampFile = path.join(target, 'classpath.stamp');
  const stamp = await sha256File(path.join(dir, 'pom.xml'));
  const cached = await readIfExists(cpFile);
  if (cached && (await readIfExists(stampFile)) === stamp) {
    const jars = cached.trim().split(path.delimiter);
    if (jars.every((j) => existsSync(j))) return cached.trim();
  }
  await mkdir(target, { recursive: true });
  progress('resolving Neo4j 5.26 jars through Maven (the first run downloads about 150 MB)');
  await runMaven(
    ['-B', '-f', path.join(dir, 'pom.xml'), 'dependency:build-classpath', `-Dmdep.outputFile=${cpFile}`],
    progress,
  );
  const classpath = (await readFile(cpFile, 'utf8')).trim();
  await writeFile(stampFile, stamp);
  return classpath;
}

function runMaven(args: string[], progress: (m: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('mvn', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const tail: string[] = [];
    let downloaded = 0;
    let lastReport = Date.now();
    const onLine = (line: string): void => {
      tail.push(line);
      if (tail.length > 40) tail.shift();
      if (/Downloaded from/.test(line)) {
        downloaded += 1;
        if (Date.now() - lastReport > 2000) {
          lastReport = Date.now();
          progress(`  ... ${downloaded} files downloaded`);
        }
      }
    };
    readline.createInterface({ input: child.stdout }).on('line', onLine);
    readline.createInterface({ input: child.stderr }).on('line', onLine);
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) {
        if (downloaded > 0) progress(`  ... done, ${downloaded} files downloaded`);
        resolve();
      } else {
        reject(new Neo4jUnavailableError(`Maven could not resolve the Neo4j jars:\n${tail.join('\n')}`));
      }
    });
  });
}

/** Compiles the launcher once per source change, so each start skips in-memory compilation. */
async function compileLauncher(classpath: string): Promise<string> {
  const dir = toolsDir();
  const out = path.join(dir, 'target', 'launcher');
  const stampFile = path.join(out, 'Launcher.stamp');
  const source = path.join(dir, 'Launcher.java');
  const stamp = await sha256File(source);
  if ((await readIfExists(stampFile)) === stamp && existsSync(path.join(out, 'Launcher.class'))) return out;
  await mkdir(out, { recursive: true });
  const result = spawnSync('javac', ['-cp', classpath, '-d', out, source], { encoding: 'utf8' });
  if (result.status !== 0) {
    throw new Neo4jUnavailableError(`cannot compile tools/neo4j/Launcher.java:\n${result.stderr}`);
  }
  await writeFile(stampFile, stamp);
  return out;
}

/** A free port other than those given, for two connectors that must not pick the same one. */
async function freePortExcept(taken: number[]): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (!taken.includes(port)) return port;
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port assigned'));
      });
    });
  });
}

/** A running embedded Neo4j, controlled through its process. */
export class LocalNeo4j {
  private exited: Promise<number | null>;

  private constructor(
    private readonly child: ChildProcess,
    readonly uri: string,
    readonly home: string,
    readonly port: number,
    /** Where Neo4j Browser is served, when the HTTP connector is on. */
    readonly browserUrl: string | undefined,
  ) {
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null) resolve(child.exitCode);
      else child.once('exit', (code) => resolve(code));
    });
    // A parent that exits without stopping the database still takes the JVM with it: the closed
    // stdin pipe ends the launcher, and this hook covers an explicit process.exit().
    const onExit = (): void => {
      child.kill('SIGKILL');
    };
    process.once('exit', onExit);
    void this.exited.then(() => process.removeListener('exit', onExit));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  static async start(options: {
    home: string;
    port: number;
    /** Turns the HTTP connector (and so Neo4j Browser) on; 0 picks a free port. */
    httpPort?: number;
    heap: string;
    pageCache: string;
    niceness?: number;
    progress: (m: string) => void;
    timeoutMs?: number;
  }): Promise<LocalNeo4j> {
    const classpath = await resolveClasspath(options.progress);
    const launcherDir = await compileLauncher(classpath);
    const port = options.port === 0 ? await freePortExcept([options.httpPort ?? 0]) : options.port;
    const httpPort = options.httpPort === 0 ? await freePortExcept([port]) : options.httpPort;
    await mkdir(options.home, { recursive: true });
    // The classpath goes through an argument file: hundreds of jars would otherwise fill `ps`.
    const argFile = path.join(launcherDir, 'classpath.args');
    await writeFile(argFile, `-cp "${`${launcherDir}${path.delimiter}${classpath}`.replace(/\\/g, '/')}"\n`);
    const child = spawn(
      'java',
      [
        ...JVM_FLAGS,
        `-Xmx${options.heap}`,
        `@${argFile}`,
        'Launcher',
        '--home',
        options.home,
        '--port',
        String(port),
        ...(httpPort === undefined ? [] : ['--http-port', String(httpPort)]),
        '--pagecache',
        options.pageCache,
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    // The JVM's first threads now, and every thread it has once it is ready: a thread it makes
    // after that starts with its creator's priority.
    const lower = (): void => {
      if (options.niceness && child.pid !== undefined) lowerProcessPriority(child.pid, options.niceness);
    };
    lower();
    const stderrTail: string[] = [];
    readline.createInterface({ input: child.stderr }).on('line', (line) => {
      stderrTail.push(line);
      if (stderrTail.length > 30) stderrTail.shift();
    });
    const ready = new Promise<void>((resolve, reject) => {
      const lines = readline.createInterface({ input: child.stdout });
      lines.on('line', (line) => {
        if (line.startsWith('NEO4J_READY ')) resolve();
        else if (line.startsWith('NEO4J_PORT_IN_USE')) {
          const taken = Number(line.split(' ')[1]);
          reject(portTaken(taken, taken === httpPort && taken !== port ? 'http' : 'bolt'));
        } else if (line.startsWith('NEO4J_FAILED')) {
          reject(new Neo4jUnavailableError(`embedded Neo4j failed to start: ${line.slice(13)}`));
        }
      });
      child.once('error', reject);
      child.once('exit', (code) =>
        reject(
          new Neo4jUnavailableError(
            `embedded Neo4j exited with code ${String(code)} before it was ready:\n${stderrTail.join('\n')}`,
          ),
        ),
      );
    });
    const instance = new LocalNeo4j(
      child,
      `bolt://127.0.0.1:${port}`,
      options.home,
      port,
      httpPort === undefined ? undefined : `http://127.0.0.1:${httpPort}/browser/`,
    );
    try {
      await withTimeout(ready, options.timeoutMs ?? 180_000, 'embedded Neo4j start');
      lower();
      return instance;
    } catch (err) {
      await instance.stop();
      throw err;
    }
  }

  /** Stops the database cleanly (SIGTERM), forcing it after the grace period. */
  async stop(graceMs = 30_000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    try {
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

async function startMavenNeo4j(options: LocalNeo4jOptions): Promise<Neo4jEndpoint> {
  const ephemeral = options.dataDir === undefined;
  const home = ephemeral
    ? path.join(os.tmpdir(), `pas-neo4j-${process.pid}-${Date.now()}`)
    : path.resolve(options.dataDir!, 'neo4j');
  options.progress(`starting embedded Neo4j 5.26 (data in ${home})`);
  const started = Date.now();
  const db = await LocalNeo4j.start({ ...options, home });
  // With port 0 (any free one) the address is known only now: say which ports were taken.
  const browser = db.browserUrl ? `, Neo4j Browser at ${db.browserUrl}` : '';
  options.progress(
    `Neo4j ready at ${db.uri}${browser} after ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return {
    uri: db.uri,
    user: 'neo4j',
    password: '',
    source: 'maven',
    browserUrl: db.browserUrl,
    stop: async () => {
      await db.stop();
      if (ephemeral) {
        const { rm } = await import('node:fs/promises');
        await rm(home, { recursive: true, force: true });
      }
    },
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return within(promise, ms, (): never => {
    throw new Neo4jUnavailableError(`${what} timed out after ${ms} ms`);
  });
}
