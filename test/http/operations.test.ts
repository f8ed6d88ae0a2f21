import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { expect } from 'chai';
import { projectRoot } from '../../src/paths.js';
import { SCOPES } from '../../src/vocabulary/scopes.js';
import { startTestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';

/** The service's version, as package.json gives it. */
const VERSION = (
  JSON.parse(readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as { version: string }
).version;

describe('operations', () => {
  const fx = useApp();

  describe('endpoints', () => {
    it("GET /healthz answers while the process lives, with the service's version", async () => {
      const res = await fx.app.http.get('/healthz');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ status: 'ok', version: VERSION });
    });

    it("GET /readyz answers 200 with the database up, with the service's version", async () => {
      const res = await fx.app.http.get('/readyz');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ status: 'ready', version: VERSION, checks: { neo4j: 'up' } });
    });

    it('GET /readyz answers 503 while draining for shutdown', async () => {
      fx.app.runtime.draining = true;
      try {
        const res = await fx.app.http.get('/readyz');
        expect(res.status).to.equal(503);
        expect(res.body.code).to.equal('UNAVAILABLE');
        expect(res.headers.get('retry-after')).to.match(/^\d+$/);
      } finally {
        fx.app.runtime.draining = false;
      }
    });

    it('GET /metrics counts requests and latency by route template and status', async () => {
      await fx.app.http.get('/v1/openapi.json');
      await fx.app.http.get('/v1/no/such/thing');
      const res = await fx.app.http.get('/metrics');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/plain/);
      expect(res.text).to.match(
        /http_requests_total\{method="GET",route="\/v1\/openapi.json",status="200"\} [1-9]/,
      );
      expect(res.text).to.match(/http_requests_total\{method="GET",route="unmatched",status="404"\} [1-9]/);
      expect(res.text).to.match(
        /http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/v1\/openapi.json",status="200"\}/,
      );
      expect(res.text).to.match(/neo4j_pool_max_size 50/);
      expect(res.text).to.match(/neo4j_up 1/);
      expect(res.text).to.match(/neo4j_pool_connections_in_use [0-9]+/);
      expect(res.text).to.match(
        /neo4j_transactions_total\{mode="read",unit="system\/migration_list",outcome="ok"\}/,
      );
    });
  });

  describe('OpenAPI document', () => {
    let doc: any;
    before(async () => {
      doc = (await fx.app.http.get('/v1/openapi.json')).body;
    });

    it('is a valid OpenAPI 3.1 document', async () => {
      const validator = new Validator();
      const result = await validator.validate(structuredClone(doc));
      expect(result.errors ?? [], JSON.stringify(result.errors, null, 1)).to.deep.equal([]);
      expect(result.valid).to.equal(true);
      expect(doc.openapi).to.equal('3.1.0');
    });

    it("carries the service's version as its info.version", () => {
      expect(doc.info.version).to.equal(VERSION);
    });

    it('describes exactly the operations the router serves', () => {
      const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(
        ([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`),
      );
      const served = fx.app.server.app.routes.routes.map((r) => `${r.method} ${r.path}`);
      expect(documented.sort()).to.deep.equal(served.sort());
      for (const route of fx.app.server.app.routes.routes) {
        const concrete = route.path.replace(/\{[^}]+\}/g, 'x');
        expect(fx.app.server.app.routes.resolve(route.method, concrete).route?.operationId).to.equal(
          route.operationId,
        );
      }
    });

    it('gives every operation a summary, a success response schema and its scope', () => {
      const problems: string[] = [];
      for (const [p, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
        for (const [method, op] of Object.entries(item)) {
          const name = `${method.toUpperCase()} ${p}`;
          if (!op.summary) problems.push(`${name}: no summary`);
          const success = Object.entries(op.responses as Record<string, any>).filter(([s]) => /^2/.test(s));
          if (success.length === 0) problems.push(`${name}: no success response`);
          for (const [status, response] of success) {
            if (status !== '204' && !response.content)
              problems.push(`${name}: ${status} has no content schema`);
          }
          if (!('x-required-scope' in op)) problems.push(`${name}: no x-required-scope`);
          if (
            op['x-required-scope'] !== null &&
            JSON.stringify(op.security) !== JSON.stringify([{ oauth2: [op['x-required-scope']] }])
          ) {
            problems.push(`${name}: security does not name its scope`);
          }
          if (
            p.startsWith('/v1/') &&
            !['/v1/openapi.json'].includes(p) &&
            op['x-required-scope'] === null &&
            !op.tags.includes('Authentication')
          ) {
            problems.push(`${name}: a /v1 operation without a scope`);
          }
          for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
            if (
              /^[45]/.test(status) &&
              status !== '503' &&
              !response.content?.['application/problem+json'] &&
              !response.content?.['application/json'] &&
              // AuthZEN's errors are plain messages (its HTTPS binding); SCIM has its own schema.
              !(p.startsWith('/access/') && response.content?.['text/plain']) &&
              !(p.startsWith('/scim/') && response.content?.['application/scim+json'])
            ) {
              problems.push(`${name}: ${status} has no error schema`);
            }
          }
        }
      }
      expect(problems).to.deep.equal([]);
    });

    it('declares the OAuth 2.0 security scheme with every scope', () => {
      const flow = doc.components.securitySchemes.oauth2.flows.clientCredentials;
      expect(flow.tokenUrl).to.match(/\/v1\/auth\/token$/);
      expect(Object.keys(flow.scopes)).to.deep.equal([...SCOPES]);
    });
  });

  describe('start-up warnings', () => {
    const warning = /NODE_ENV=production and PUBLIC_BASE_URL is unset/;

    /** The warning lines of a start with `env`, which is closed again at once. */
    async function warningsOfStart(env: Record<string, string>): Promise<Record<string, unknown>[]> {
      const app = await startTestApp({ keepData: true, env });
      try {
        return app.logs.entries().filter((e) => warning.test(String(e['msg'])));
      } finally {
        await app.close();
      }
    }

    it('warns once, in production without PUBLIC_BASE_URL, that tokens and SCIM locations name the default', async () => {
      const lines = await warningsOfStart({ NODE_ENV: 'production', PUBLIC_BASE_URL: '' });
      expect(lines).to.have.length(1);
      expect(lines[0]).to.include({ level: 'warn' });
      expect(String(lines[0]!['msg'])).to.contain('access tokens').and.to.contain('SCIM');
      expect(String(lines[0]!['public_base_url'])).to.match(/^http:\/\/localhost:\d+$/);
    });

    it('says nothing with PUBLIC_BASE_URL set, or outside production', async () => {
      expect(
        await warningsOfStart({ NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://pas.example' }),
      ).to.deep.equal([]);
      expect(await warningsOfStart({ PUBLIC_BASE_URL: '' })).to.deep.equal([]);
    });
  });
});
