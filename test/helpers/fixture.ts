import { startTestApp, type TestApp, type TestAppOptions } from './app.js';
import { ADMIN, tokenFor } from './auth.js';
import type { HttpClient } from './http.js';

export interface AppFixtureOptions extends TestAppOptions {
  /** A new app (and an emptied graph) for every test, instead of one for the whole block. */
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
}

/**
 * Starts the test app (startTestApp) for the enclosing `describe` block: in a `before` hook (a
 * `beforeEach` with `fresh`), with an admin token, and closes it after. Hooks the block declares
 * after `useApp` run after the app is up.
 */
export function useApp(options: AppFixtureOptions = {}): AppFixture {
  const { fresh, startTimeoutMs, ...appOptions } = options;
  let current: { app: TestApp; token: string; api: HttpClient } | undefined;

  async function start(this: Mocha.Context): Promise<void> {
    if (startTimeoutMs !== undefined) this.timeout(startTimeoutMs);
    const app = await startTestApp(appOptions);
    try {
      const token = (await tokenFor(app.http, ADMIN)).access_token;
      current = { app, token, api: app.http.withToken(token) };
    } catch (err) {
      await app.close();
      throw err;
    }
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
  };
}
