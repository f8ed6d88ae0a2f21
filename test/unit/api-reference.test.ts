import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SCOPES } from '../../src/vocabulary/scopes.js';
import { loadConfig } from '../../src/config/config.js';
import { settleWindowMs } from '../../src/decisions/record-list.js';
import { ERROR_CODES } from '../../src/errors/errors.js';
import { buildOpenApi } from '../../src/http/openapi/build.js';
import { STATUS_OF } from '../../src/http/problems.js';
import type { AnyRoute } from '../../src/http/route.js';
import { accessHistoryRoutes } from '../../src/http/routes/access-history.js';
import { auditRoutes } from '../../src/http/routes/audit.js';
import { authRoutes } from '../../src/http/routes/auth.js';
import { authzenRoutes } from '../../src/http/routes/authzen.js';
import { clientRoutes } from '../../src/http/routes/clients.js';
import { connectorRoutes } from '../../src/http/routes/connectors.js';
import { decisionRoutes } from '../../src/http/routes/decisions.js';
import { delegationRoutes } from '../../src/http/routes/delegations.js';
import { groupRoutes } from '../../src/http/routes/groups.js';
import { operationRoutes } from '../../src/http/routes/operations.js';
import { policyRoutes } from '../../src/http/routes/policies.js';
import { principalSearchRoutes } from '../../src/http/routes/principal-search.js';
import { principalRoutes } from '../../src/http/routes/principals.js';
import { reportRoutes } from '../../src/http/routes/reports.js';
import { resourceRoutes } from '../../src/http/routes/resources.js';
import { scimRoutes } from '../../src/http/routes/scim.js';
import { webhookRoutes } from '../../src/http/routes/webhooks.js';
import { projectRoot } from '../../src/paths.js';
import type { Services } from '../../src/runtime.js';

/**
 * docs/api.md, the project's API reference, against the OpenAPI document the service serves at
 * /v1/openapi.json. Both are checked without a database: the document is built by the service's
 * own builder from the same route specs `createApp` (src/http/app.ts) registers, whose handlers
 * never run here.
 */

const REFERENCE = path.join(projectRoot(), 'docs', 'api.md');
const APP = path.join(projectRoot(), 'src', 'http', 'app.ts');

/** A dependency that exists but must not be used: building route specs never calls one. */
function unusable(name: string): never {
  return new Proxy(() => undefined, {
    get: (_target, key) => {
      throw new Error(`${name}.${String(key)} was used while building route specs`);
    },
    apply: () => {
      throw new Error(`${name} was called while building route specs`);
    },
  }) as never;
}

const config = loadConfig({});

/** The services the routes close over; only the SCIM base URL is read while building them. */
const services = new Proxy({} as Services, {
  get: (_target, key) =>
    key === 'scimUsers'
      ? { baseUrl: `${config.publicBaseUrl}/scim/v2` }
      : unusable(`services.${String(key)}`),
});

/**
 * The route builders of `allRoutes` in src/http/app.ts, in its order, called as it calls them.
 * The test 'builds the operations from every route builder the service registers' keeps this
 * list and that function in step.
 */
const BUILDERS: Record<string, () => AnyRoute[]> = {
  operationRoutes: () =>
    operationRoutes({
      databaseUp: unusable('databaseUp'),
      metrics: unusable('metrics'),
      draining: unusable('draining'),
      openapi: unusable('openapi'),
    }),
  authRoutes: () => authRoutes(services),
  clientRoutes: () => clientRoutes(services),
  connectorRoutes: () => connectorRoutes(services, config.connectors.syncMaxBytes),
  auditRoutes: () => auditRoutes(services),
  accessHistoryRoutes: () => accessHistoryRoutes(services),
  reportRoutes: () => reportRoutes(services),
  principalSearchRoutes: () => principalSearchRoutes(services),
  groupRoutes: () => groupRoutes(services),
  principalRoutes: () => principalRoutes(services),
  policyRoutes: () => policyRoutes(services),
  decisionRoutes: () =>
    decisionRoutes(services, { settleMs: settleWindowMs(config.decisions.flushIntervalMs) }),
  delegationRoutes: () => delegationRoutes(services),
  resourceRoutes: () => resourceRoutes(services),
  authzenRoutes: () => authzenRoutes(services),
  scimRoutes: () => scimRoutes(services),
  webhookRoutes: () => webhookRoutes(services),
};

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface OpenApiOperation {
  'x-required-scope': string | null;
  'x-rate-limit-bucket': string | null;
  security: Record<string, string[]>[];
  responses: Record<string, Json>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** `METHOD /path` of every operation of an OpenAPI document, as the document writes the path. */
function documentOperations(document: { paths?: unknown }): string[] {
  const paths = (document.paths ?? {}) as Record<string, Record<string, unknown>>;
  const operations: string[] = [];
  for (const [template, item] of Object.entries(paths)) {
    for (const method of METHODS) if (item[method]) operations.push(`${method.toUpperCase()} ${template}`);
  }
  return operations;
}

const OPERATION = /^(GET|POST|PUT|PATCH|DELETE) (\/\S*)$/;

interface ReferenceEntry {
  operation: string;
  /** The text from the heading to the next heading of any level. */
  text: string;
}

/**
 * The operations a reference lists in its headings, each with the text of its entry: a heading is
 * an operation heading when a code span of it reads `METHOD /path`. Lines inside fenced code
 * blocks are never headings.
 */
function referenceEntries(markdown: string): ReferenceEntry[] {
  const entries: ReferenceEntry[] = [];
  let current: ReferenceEntry[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
    }
    const heading = fence === undefined && !marker ? /^#{1,6}\s+(.*)$/.exec(line) : null;
    if (heading) {
      current = [];
      for (const span of heading[1]!.matchAll(/`([^`]+)`/g)) {
        if (OPERATION.test(span[1]!)) current.push({ operation: span[1]!, text: '' });
      }
      entries.push(...current);
      continue;
    }
    for (const entry of current) entry.text += `${line}\n`;
  }
  return entries;
}

interface Drift {
  /** Operations of the document the reference has no heading for. */
  missing: string[];
  /** Operation headings of the reference the document does not have. */
  unknown: string[];
  /** Operations with more than one heading. */
  repeated: string[];
}

function drift(documented: readonly string[], referenced: readonly string[]): Drift {
  const inDocument = new Set(documented);
  const inReference = new Set(referenced);
  return {
    missing: documented.filter((op) => !inReference.has(op)).sort(),
    unknown: [...inReference].filter((op) => !inDocument.has(op)).sort(),
    repeated: [...new Set(referenced.filter((op, i) => referenced.indexOf(op) !== i))].sort(),
  };
}

interface ExpectedEntry {
  /** The scope, `public` or `connector`. */
  auth: string;
  /** The rate-limit bucket, or `none`. */
  bucket: string;
  /** The statuses the operation's spec declares itself (the shared errors are stated once, in §1). */
  statuses: string[];
}

/** What an entry of the reference fails to say of its operation. */
function entryProblems(expected: ExpectedEntry, text: string): string[] {
  const problems: string[] = [];
  const auth = /\*\*Auth\*\* `([^`]+)`/.exec(text)?.[1];
  const bucket = /\*\*Bucket\*\* `([^`]+)`/.exec(text)?.[1];
  if (auth !== expected.auth) problems.push(`Auth is ${auth ?? 'not stated'}, not ${expected.auth}`);
  if (bucket !== expected.bucket)
    problems.push(`Bucket is ${bucket ?? 'not stated'}, not ${expected.bucket}`);
  for (const status of expected.statuses) {
    if (!new RegExp(`(?<![0-9])${status}(?![0-9])`).test(text))
      problems.push(`status ${status} is not mentioned`);
  }
  return problems;
}

function expectedEntry(operation: OpenApiOperation, route: AnyRoute): ExpectedEntry {
  const connector = operation.security.some((requirement) => 'scimToken' in requirement);
  return {
    auth: operation['x-required-scope'] ?? (connector ? 'connector' : 'public'),
    bucket: operation['x-rate-limit-bucket'] ?? 'none',
    statuses: Object.keys(route.responses),
  };
}

/** The route builders `allRoutes` of src/http/app.ts spreads into the service's operations. */
function registeredBuilders(appSource: string): string[] {
  const body = /function allRoutes\([^)]*\)[^{]*\{([\s\S]*?)\n\}/.exec(appSource)?.[1] ?? '';
  return [...body.matchAll(/\.\.\.(\w+Routes)\(/g)].map((m) => m[1]!);
}

describe('API reference (docs/api.md)', () => {
  const routes = Object.values(BUILDERS).flatMap((build) => build());
  const document = buildOpenApi(routes, {
    title: 'Principals and Access Service',
    version: 'test',
    description: 'docs/api.md check',
    serverUrl: config.publicBaseUrl,
    tokenUrl: `${config.publicBaseUrl}/v1/auth/token`,
  });
  const operations = documentOperations(document);
  const markdown = readFileSync(REFERENCE, 'utf8');
  const entries = referenceEntries(markdown);
  const referenced = entries.map((e) => e.operation);

  it('builds the operations from every route builder the service registers', () => {
    expect(Object.keys(BUILDERS)).to.deep.equal(registeredBuilders(readFileSync(APP, 'utf8')));
    expect(operations).to.have.length(routes.length);
    expect(operations).to.include('POST /v1/decisions/evaluate');
    expect(operations).to.include('POST /access/v1/evaluation');
  });

  it('has one heading for every operation of the OpenAPI document, and none for another', () => {
    expect(drift(operations, referenced)).to.deep.equal({ missing: [], unknown: [], repeated: [] });
  });

  it('states the scope, bucket and own statuses of each operation as the document has them', () => {
    const paths = document['paths'] as unknown as Record<string, Record<string, OpenApiOperation>>;
    const problems: string[] = [];
    for (const route of routes) {
      const operation = paths[route.path]![route.method.toLowerCase()]!;
      const name = `${route.method} ${route.path}`;
      const text = entries.find((e) => e.operation === name)?.text;
      if (text === undefined) continue; // reported by the test above
      problems.push(...entryProblems(expectedEntry(operation, route), text).map((p) => `${name}: ${p}`));
    }
    expect(problems).to.deep.equal([]);
  });

  it('lists every error code with its status, and every scope', () => {
    const rows = markdown.split('\n').filter((line) => line.startsWith('|'));
    const codes: [string, number][] = [
      ...ERROR_CODES.map((code): [string, number] => [code, STATUS_OF[code]]),
      ['REQUEST_HEADER_FIELDS_TOO_LARGE', 431],
    ];
    for (const [code, status] of codes) {
      expect(
        rows.some((row) => new RegExp(`^\\|\\s*${status}\\s*\\|\\s*\`${code}\``).test(row)),
        `a row "| ${status} | \`${code}\`"`,
      ).to.equal(true);
    }
    const scopeRows = rows.flatMap((row) => /^\|\s*`([a-z]+:[a-z]+)`/.exec(row)?.[1] ?? []);
    expect([...new Set(scopeRows)].sort()).to.deep.equal([...SCOPES].sort());
  });

  describe('the checks themselves', () => {
    // Doctored from the document itself, so that these hold whatever state docs/api.md is in.
    it('report an operation the reference invents', () => {
      const doctored = [...operations, 'POST /v1/delegations/{id}/renew'];
      expect(drift(operations, doctored)).to.deep.equal({
        missing: [],
        unknown: ['POST /v1/delegations/{id}/renew'],
        repeated: [],
      });
    });

    it('report an operation the reference leaves out, or lists twice', () => {
      const doctored = operations.filter((op) => op !== 'POST /v1/decisions/evaluate');
      doctored.push('GET /v1/principals');
      expect(drift(operations, doctored)).to.deep.equal({
        missing: ['POST /v1/decisions/evaluate'],
        unknown: [],
        repeated: ['GET /v1/principals'],
      });
    });

    it('read operation headings only, outside code blocks', () => {
      const sample = [
        '## 2. Principals',
        'Prose naming `GET /v1/nowhere` is not a heading.',
        '#### `GET /v1/principals`',
        '**Auth** `principals:read` · **Bucket** `standard`',
        '```sh',
        '# `DELETE /v1/in-a-code-block`',
        '```',
        '### `POST /v1/a` and `PUT /v1/b/{id}`',
        'shared text',
        '### `get /v1/lower-case` is not an operation',
      ].join('\n');
      const found = referenceEntries(sample);
      expect(found.map((e) => e.operation)).to.deep.equal([
        'GET /v1/principals',
        'POST /v1/a',
        'PUT /v1/b/{id}',
      ]);
      expect(found[0]!.text).to.contain('# `DELETE /v1/in-a-code-block`');
      expect(found[2]!.text).to.equal('shared text\n');
    });

    it('report an entry whose scope, bucket or statuses drift', () => {
      const text =
        '\n**Auth** `principals:read` · **Bucket** `standard`\n\n→ `201` Created. `4220` is no status.\n';
      expect(
        entryProblems({ auth: 'principals:read', bucket: 'standard', statuses: ['201'] }, text),
      ).to.deep.equal([]);
      expect(
        entryProblems({ auth: 'principals:write', bucket: 'bulk', statuses: ['201', '422'] }, text),
      ).to.deep.equal([
        'Auth is principals:read, not principals:write',
        'Bucket is standard, not bulk',
        'status 422 is not mentioned',
      ]);
    });
  });
});
