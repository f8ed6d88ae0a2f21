/**
 * The OpenAPI document the service serves at GET /v1/openapi.json, built without a server or a
 * database, for the generators that write types from it (tools/console-types.ts for the console,
 * tools/client-types.ts for the TypeScript client).
 *
 * It is the document `createApp` builds: the routes only declare specs while the app is
 * assembled, so the runtime they are given is a stub whose every use fails loudly.
 */
import path from 'node:path';
import { loadConfig } from '../src/config/config.js';
import { createApp } from '../src/http/app.js';
import { createLogger } from '../src/logging/logger.js';
import { projectRoot } from '../src/paths.js';
import type { Runtime } from '../src/runtime.js';

/**
 * A dependency that exists but must not be used: reading a member gives another such stub (the
 * app passes services and stores around while it is assembled), while calling one, constructing
 * one or turning one into a string or number throws, naming it.
 */
function unusable(name: string): never {
  const fail = (what: string): never => {
    throw new Error(
      `${what} while building the OpenAPI document; give it a real value in tools/openapi-document.ts`,
    );
  };
  return new Proxy(() => undefined, {
    get: (_target, key) => {
      if (key === Symbol.toPrimitive || key === 'toString' || key === 'valueOf') {
        return () => fail(`${name} was read as a value`);
      }
      if (key === 'then') return undefined; // not a promise
      return unusable(`${name}.${String(key)}`);
    },
    apply: () => fail(`${name}() was called`),
    construct: () => fail(`new ${name}() was called`),
  }) as never;
}

/**
 * The OpenAPI document exactly as GET /v1/openapi.json serves it with the default configuration.
 * Assembling the app reads the configuration, asks the logger whether access logs are on and
 * reads the SCIM base URL of the services; nothing else of the runtime is touched.
 */
export function openApiDocument(): Record<string, unknown> {
  const config = loadConfig({});
  const logger = createLogger('silent');
  const services = new Proxy(
    {},
    {
      get: (_target, key) =>
        key === 'scimUsers'
          ? { baseUrl: `${config.publicBaseUrl}/scim/v2` }
          : unusable(`runtime.services.${String(key)}`),
    },
  );
  const runtime = new Proxy({} as Runtime, {
    get: (_target, key) => {
      if (key === 'config') return config;
      if (key === 'logger') return logger;
      if (key === 'services') return services;
      if (key === 'draining') return false;
      return unusable(`runtime.${String(key)}`);
    },
  });
  return createApp(runtime, { consoleDir: path.join(projectRoot(), 'dist', 'console') }).openapi;
}
