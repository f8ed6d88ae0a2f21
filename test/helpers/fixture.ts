import { startTestApp, type TestApp, type TestAppOptions } from './app.js';
import { ADMIN, tokenFor } from './auth.js';
import type { HttpClient } from './http.js';

/**
 * A value, or what gives it when the app starts: for what the block's earlier hooks make (a port,
 * a Neo4j of its own) and what the environment holds only once the run's setup is done (the
 * suite's NEO4J_URI is set after the test files are read).
 */
export type Late<T> = T | (() => T);

/** How an app of the block starts: startTestApp's options, any of env and neo4jUri late. */
export interface AppStartOptions extends Omit<TestAppOptions, 'env' | 'neo4jUri'> {
  env?: Late<Record<string, string>>;
  neo4jUri?: Late<string>;
}

export interface AppFixtureOptions extends AppStartOptions {
  /** A new app (and an emptied graph, unless keepData) for every test, instead of one for the block. */
  fresh?: boolean;
  /** Time allowed for start-up (default: mocha's timeout). */
  startTimeoutMs?: number;
}

/** What `useApp` provides; read it inside tests and hooks, not when the block is declared. */
export interface AppFixture {
  readonly app: TestApp;
  /** The app's client, without credentials. */
  readonly http: HttpClient;
  /** An admin access token of the app's bootstrap client. */
  readonly token: string;
  /** A client that sends `token`. */
  readonly api: HttpClient;
  /**
   * Stops the app as a deployment does (gracefully: what it writes at a stop is written) and
   * starts it again on the same data, with `options` in place of the block's when given (an
   * instance configured otherwise, on the same store). `whileDown` runs between the stop and the
   * start, to change what the new start finds. The block's hooks close whichever app is current.
   */
  restart(options?: AppStartOptions, whileDown?: () => Promise<void>): Promise<TestApp>;
}

const late = <T>(value: Late<T>): T => (typeof value === 'function' ? (value as () => T)() : value);

/**
 * Starts the test app (startTestApp) for the enclosing `describe` block: in a `before` hook (a
 * `beforeEach` with `fresh`), with an admin token, and closes it after. Hooks the block declares
 * after `useApp` run after the app is up (and its `after` hooks after the app is closed); hooks
 * declared before it run before the app starts, so that late options can use what they made.
 */
export function useApp(options: AppFixtureOptions = {}): AppFixture {
  const { fresh, startTimeoutMs, ...startOptions } = options;
  let current: { app: TestApp; token: string; api: HttpClient } | undefined;

  async function open(how: AppStartOptions): Promise<void> {
    const { env, neo4jUri, ...rest } = how;
    const appOptions: TestAppOptions = { ...rest };
    if (env !== undefined) appOptions.env = late(env);
    if (neo4jUri !== undefined) appOptions.neo4jUri = late(neo4jUri);
    const app = await startTestApp(appOptions);
    try {
      const token = (await tokenFor(app.http, ADMIN)).access_token;
      current = { app, token, api: app.http.withToken(token) };
    } catch (err) {
      await app.close();
      throw err;
    }
  }
  async function start(this: Mocha.Context): Promise<void> {
    if (startTimeoutMs !== undefined) this.timeout(startTimeoutMs);
    await open(startOptions);
  }
  async function stop(): Promise<void> {
    const app = current?.app;
    current = undefined;
    await app?.close();
  }
  if (fresh) {
    beforeEach(start);
    afterEach(stop);
  } else {
    before(start);
    after(stop);
  }

  const get = (): NonNullable<typeof current> => {
    if (!current) throw new Error('useApp: the app is only there inside tests and hooks of its block');
    return current;
  };
  return {
    get app() {
      return get().app;
    },
    get http() {
      return get().app.http;
    },
    get token() {
      return get().token;
    },
    get api() {
      return get().api;
    },
    async restart(restartOptions, whileDown) {
      get();
      await stop();
      await whileDown?.();
      await open({ ...(restartOptions ?? startOptions), keepData: true });
      return get().app;
    },
  };
}
