import { expect } from 'chai';
import fc from 'fast-check';
import type { TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import {
  arbitraryFor,
  HOSTILE_QUERY_VALUES,
  queryValueFor,
  type Schema,
  type SchemaArbitraryOptions,
} from '../helpers/arbitraries.js';
import { ADMIN, authed, createClient, tokenFor, type TestClient } from '../helpers/auth.js';
import type { HttpClient } from '../helpers/http.js';

interface Operation {
  method: string;
  path: string;
  parameters: { name: string; in: 'path' | 'query'; schema: Schema }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  'x-required-scope': string | null;
  security?: Record<string, string[]>[];
  responses: Record<string, unknown>;
}

interface FuzzRequest {
  params: Record<string, string>;
  query: Record<string, string | string[] | null>;
  body: { kind: 'none' } | { kind: 'value'; value: unknown } | { kind: 'raw'; text: string };
  contentType: string;
}

/** A fixed seed, so that a failure found once is found again; change it to explore further. */
const SEED = 20261123;
const RUNS_PER_OPERATION = 30;

describe('a schema-driven fuzzer against every operation', () => {
  let app: TestApp;
  let admin: HttpClient;
  let victim: TestClient;
  let operations: Operation[];
  let options: SchemaArbitraryOptions;

  const fx = useApp({ env: { RATE_LIMIT_BULK: '1000000' } });

  before(async () => {
    // Every operation is sent dozens of requests: the bulk bucket must not run out first.
    app = fx.app;
    admin = fx.api;
    const doc = app.server.app.openapi as {
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, Schema> };
    };
    operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ ...op, method: method.toUpperCase(), path })),
    );
    // Real data for requests to reach: a principal, a group with a member, and a client that
    // may be deleted (never the admin client the fuzzer itself uses).
    const principal = await admin.post('/v1/principals', { type: 'AI_AGENT', name: 'fuzz-target' });
    const group = await admin.post('/v1/groups', { name: 'fuzz-group' });
    await admin.put(`/v1/groups/${group.body.id}/members/${principal.body.id}`);
    victim = await createClient(app, ['audit:read', 'principals:read']);
    const deletable = await createClient(app, ['audit:read']);
    const events = await admin.get('/v1/audit/events?limit=5');
    options = {
      components: doc.components.schemas,
      ids: {
        prn: [principal.body.id as string],
        grp: [group.body.id as string],
        cli: [deletable.id],
        evt: (events.body.data as { id: string }[]).map((e) => e.id),
      },
    };
  });

  function requestArbitrary(op: Operation): fc.Arbitrary<FuzzRequest> {
    const pathParams: Record<string, fc.Arbitrary<string>> = {};
    const queryParams: Record<string, fc.Arbitrary<string | string[] | null>> = {};
    for (const p of op.parameters) {
      if (p.in === 'path') {
        pathParams[p.name] = fc.oneof(
          { weight: 4, arbitrary: arbitraryFor(p.schema, options).map((v) => String(v)) },
          {
            weight: 1,
            arbitrary: fc.constantFrom(
              '..',
              '%2e%2e',
              'prn_01J',
              'PRN_01JD0000000000000000000000',
              'x'.repeat(600),
            ),
          },
        );
      } else {
        queryParams[p.name] = fc.option(queryValueFor(p.schema, options), { freq: 2 });
      }
    }
    const mediaTypes = Object.keys(op.requestBody?.content ?? {});
    const bodySchema = op.requestBody ? Object.values(op.requestBody.content)[0]!.schema : undefined;
    const body: fc.Arbitrary<FuzzRequest['body']> = bodySchema
      ? fc.oneof(
          {
            weight: 8,
            arbitrary: arbitraryFor(bodySchema, options).map((value) => ({ kind: 'value' as const, value })),
          },
          {
            weight: 1,
            arbitrary: fc
              .constantFrom(
                '{',
                '{"a":',
                '[1,2',
                'null',
                '"text"',
                '{"type":"USER"',
                '\u0000',
                '{}'.repeat(50),
              )
              .map((text) => ({ kind: 'raw' as const, text })),
          },
          { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
        )
      : fc.constant({ kind: 'none' as const });
    return fc.record({
      params: fc.record(pathParams),
      query: fc.record(queryParams),
      body,
      contentType: fc.constantFrom(
        ...(mediaTypes.length > 0 ? mediaTypes : ['application/json']),
        'text/plain',
      ),
    });
  }

  async function send(
    op: Operation,
    request: FuzzRequest,
  ): Promise<{ status: number; text: string; url: string }> {
    let path = op.path;
    for (const [name, value] of Object.entries(request.params)) {
      path = path.replace(`{${name}}`, encodeURIComponent(value));
    }
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(request.query)) {
      if (value === null) continue;
      for (const v of Array.isArray(value) ? value : [value]) search.append(name, v);
    }
    const url = `${path}${search.size > 0 ? `?${search.toString()}` : ''}`;
    // The revocation endpoints revoke the bearer token itself when sent without a body: they get
    // a token of their own, so the fuzzer keeps its admin token.
    const token = op.path.includes('/auth/') ? (await tokenFor(app.http, victim)).access_token : undefined;
    const client = token ? app.http.withToken(token) : admin;
    let raw: string | undefined;
    if (request.body.kind === 'raw') raw = request.body.text;
    if (request.body.kind === 'value') {
      const value = request.body.value;
      raw =
        request.contentType === 'application/x-www-form-urlencoded' &&
        value !== null &&
        typeof value === 'object'
          ? new URLSearchParams(
              Object.entries(value as Record<string, unknown>).map(([k, v]): [string, string] => [
                k,
                String(v),
              ]),
            ).toString()
          : JSON.stringify(value);
    }
    const res = await client.request(op.method, url, {
      ...(raw === undefined ? {} : { raw, headers: { 'Content-Type': request.contentType } }),
    });
    return { status: res.status, text: res.text.slice(0, 300), url };
  }

  it('never answers 5xx and every answer matches the OpenAPI document', async function () {
    this.timeout(600_000);
    const conformance = app.server.app.conformance!;
    const failures: string[] = [];
    let requests = 0;
    for (const op of operations) {
      const before = conformance.violations.length;
      const result = await fc.check(
        fc.asyncProperty(requestArbitrary(op), async (request) => {
          const res = await send(op, request);
          requests += 1;
          if (res.status >= 500)
            throw new Error(`${op.method} ${res.url} answered ${res.status}: ${res.text}`);
          if (conformance.violations.length > before) {
            throw new Error(`${op.method} ${res.url}: ${conformance.violations.at(-1)}`);
          }
        }),
        { numRuns: RUNS_PER_OPERATION, seed: SEED, interruptAfterTimeLimit: 60_000, endOnFailure: true },
      );
      if (result.failed) {
        failures.push(
          `${op.method} ${op.path}: ${String((result.errorInstance as Error | undefined)?.message)}`,
        );
        conformance.violations.splice(before);
      }
    }
    expect(operations.length).to.be.greaterThan(20);
    expect(requests).to.be.at.least(operations.length * 10);
    expect(failures).to.deep.equal([]);
  });

  it('answers every hostile value of every query parameter without 5xx, as documented', async function () {
    this.timeout(600_000);
    const conformance = app.server.app.conformance!;
    const before = conformance.violations.length;
    const failures: string[] = [];
    let requests = 0;
    for (const op of operations) {
      // Path parameters name real data, so that each query parameter is read (not a 404 first).
      const params = Object.fromEntries(
        op.parameters
          .filter((p) => p.in === 'path')
          .map((p) => {
            const prefix = /([a-z]{3})_/.exec(String(p.schema['pattern']))?.[1] ?? 'prn';
            return [p.name, options.ids[prefix]?.[0] ?? `${prefix}_01JD0000000000000000000000`];
          }),
      );
      for (const parameter of op.parameters.filter((p) => p.in === 'query')) {
        for (const value of HOSTILE_QUERY_VALUES) {
          const res = await send(op, {
            params,
            query: { [parameter.name]: value },
            body: op.requestBody ? { kind: 'value', value: {} } : { kind: 'none' },
            contentType: 'application/json',
          });
          requests += 1;
          if (res.status >= 500) failures.push(`${op.method} ${res.url} answered ${res.status}: ${res.text}`);
        }
      }
    }
    expect(requests).to.be.greaterThan(HOSTILE_QUERY_VALUES.length * 10);
    expect(failures).to.deep.equal([]);
    expect(conformance.violations.slice(before)).to.deep.equal([]);
  });

  it('refuses a body of a media type the operation does not document, on every operation that takes one: 415, or 400 where it documents no 415', async () => {
    const connector = await admin.post('/v1/connectors', { name: `fuzz-media-${Date.now()}` });
    const scim = app.http.withToken(connector.body.token as string);
    const checked: string[] = [];
    const failures: string[] = [];
    /** Media types a client may send by mistake: JSON's cousins, a form, plain text, none at all. */
    const candidates = [
      'application/json',
      'application/vnd.api+json',
      'application/merge-patch+json',
      'application/json-patch+json',
      'application/problem+json',
      'application/scim+json',
      'application/x-www-form-urlencoded',
      'text/plain',
      'application/x-ndjson',
      undefined,
    ];
    for (const op of operations) {
      if (!op.requestBody) continue;
      const documented = Object.keys(op.requestBody.content);
      let path = op.path;
      for (const p of op.parameters.filter((x) => x.in === 'path')) {
        const prefix = /([a-z]{3})_/.exec(String(p.schema['pattern']))?.[1];
        const value = prefix ? (options.ids[prefix]?.[0] ?? `${prefix}_01JD0000000000000000000000`) : 'fuzz';
        path = path.replace(`{${p.name}}`, value);
      }
      const client = JSON.stringify(op.security ?? []).includes('scimToken') ? scim : admin;
      // AuthZEN's operations answer a body they cannot read with 400, the errors its standard names.
      const refused = '415' in op.responses ? 415 : 400;
      for (const type of candidates.filter((t) => t === undefined || !documented.includes(t))) {
        // A body without a Content-Type goes as bytes, which fetch labels with nothing.
        const res = await client.request(op.method, path, {
          raw: type === undefined ? Buffer.from('{}') : '{}',
          headers: type === undefined ? {} : { 'Content-Type': type },
        });
        if (res.status !== refused || !/must be application\//.test(res.text))
          failures.push(
            `${op.method} ${op.path} with ${type ?? 'no Content-Type'}: ${res.status} ${res.text.slice(0, 200)}`,
          );
      }
      // Each type it documents is read (what follows may still refuse the empty body).
      for (const type of op.path.includes('/auth/') ? [] : documented) {
        const res = await client.request(op.method, path, { raw: '{}', headers: { 'Content-Type': type } });
        if (/must be application\//.test(res.text))
          failures.push(
            `${op.method} ${op.path} refused its own ${type}: ${res.status} ${res.text.slice(0, 200)}`,
          );
      }
      checked.push(`${op.method} ${op.path}`);
    }
    // Every operation the router reads a body for, none left out.
    const withBody = app.server.app.routes.routes.filter((r) => r.body).map((r) => `${r.method} ${r.path}`);
    expect([...checked].sort()).to.deep.equal([...withBody].sort());
    expect(checked).to.include.members([
      'PATCH /v1/principals/{id}',
      'POST /v1/clients',
      'POST /v1/audit/reports',
      'POST /v1/connectors/{id}/sync',
      'POST /access/v1/evaluation',
      'POST /access/v1/evaluations',
      'POST /scim/v2/Users',
      'PUT /v1/resources/{type}/{identifier}',
    ]);
    expect(failures).to.deep.equal([]);
  });

  describe('what a hostile client found, each answered with 400 and a pointer', () => {
    it('refuses page numbers whose offset would not be an exact integer', async () => {
      const group = (await admin.post('/v1/groups', { name: `paged-${Date.now()}` })).body.id as string;
      for (const path of [
        '/v1/clients',
        '/v1/groups',
        '/v1/audit/events',
        `/v1/groups/${group}/members`,
        '/v1/principals',
      ]) {
        const res = await admin.get(`${path}?page=9223372036854775807`);
        expect(res.status, path).to.equal(400);
        expect(res.body.errors[0].pointer, path).to.equal('/query/page');
        const last = await admin.get(`${path}?page=90071992547409&limit=100`);
        expect(last.status, path).to.equal(200);
        expect(last.body.data, path).to.deep.equal([]);
      }
      const search = await admin.post('/v1/principals/search', { page: 2 ** 62 });
      expect(search.status).to.equal(400);
      expect(search.body.errors[0].pointer).to.equal('/page');
    });

    it('refuses time parameters Neo4j could not read', async () => {
      for (const bad of ['2026-12-31T23:59:60Z', '2026-01-01T00:00:00.1234567890Z', '2026-01-01 00:00:00Z']) {
        for (const name of ['since', 'until']) {
          const res = await admin.get(`/v1/audit/events?${name}=${encodeURIComponent(bad)}`);
          expect(res.status, `${name}=${bad}`).to.equal(400);
          expect(res.body.errors[0].pointer).to.equal(`/query/${name}`);
        }
      }
      const nanos = await admin.get(
        `/v1/audit/events?since=${encodeURIComponent('2000-01-01T00:00:00.123456789+01:00')}`,
      );
      expect(nanos.status).to.equal(200);
    });

    it('reads integer parameters in plain decimal digits only', async () => {
      for (const bad of ['0x10', '1e1', '+2', ' 2', '2.0', '02']) {
        const res = await admin.get(`/v1/groups?limit=${encodeURIComponent(bad)}`);
        expect(res.status, bad).to.equal(400);
        expect(res.body.errors).to.deep.equal([
          { pointer: '/query/limit', message: 'must be an integer in decimal digits' },
        ]);
      }
      expect((await admin.get('/v1/groups?limit=2')).body.pagination.per_page).to.equal(2);
    });

    it('answers the OAuth endpoints’ 413 and 415 in the OAuth error format, as documented', async () => {
      for (const path of ['/v1/auth/token', '/v1/auth/refresh']) {
        const wrongType = await app.http.post(path, undefined, {
          raw: 'grant_type=client_credentials',
          headers: { 'Content-Type': 'text/plain' },
        });
        expect(wrongType.status, path).to.equal(415);
        expect(wrongType.headers.get('content-type')).to.match(/^application\/json/);
        expect(wrongType.body).to.have.property('error', 'invalid_request');
        const tooLarge = await app.http.post(path, undefined, {
          raw: JSON.stringify({ grant_type: 'x'.repeat(1024 * 1024 + 10) }),
          headers: { 'Content-Type': 'application/json' },
        });
        expect(tooLarge.status, path).to.equal(413);
        expect(tooLarge.body).to.have.property('error', 'invalid_request');
      }
      const doc = app.server.app.openapi as {
        paths: Record<
          string,
          Record<string, { responses: Record<string, { content: Record<string, unknown> }> }>
        >;
      };
      for (const status of ['400', '401', '413', '415']) {
        expect(Object.keys(doc.paths['/v1/auth/token']!['post']!.responses[status]!.content)).to.deep.equal([
          'application/json',
        ]);
      }
      expect(
        Object.keys(doc.paths['/v1/auth/token']!['post']!.responses['429']!.content).sort(),
      ).to.deep.equal(['application/json', 'application/problem+json']);
    });
  });

  it('enforces the one scope of every operation: 403 without it, past authorization with it alone', async function () {
    this.timeout(120_000);
    const scoped = operations.filter((op) => op['x-required-scope'] !== null);
    expect(scoped.length).to.be.greaterThan(15);
    const all = (await tokenFor(app.http, ADMIN)).scope.split(' ');
    for (const op of scoped) {
      const scope = op['x-required-scope']!;
      const path = op.path.replace(/\{[^}]+\}/g, (m) =>
        m === '{member_id}' ? options.ids['prn']![0]! : 'prn_01JD0000000000000000000000',
      );
      const others = await authed(app, ADMIN, all.filter((s) => s !== scope).join(' '));
      const refused = await others.request(op.method, path, op.requestBody ? { body: {} } : {});
      expect(refused.status, `${op.method} ${op.path} without ${scope}`).to.equal(403);
      // AuthZEN operations answer with a plain message, every other with a problem.
      if (op.path.startsWith('/access/')) expect(refused.text).to.contain(scope);
      else expect(refused.body.code).to.equal('INSUFFICIENT_SCOPE');
      expect(refused.headers.get('www-authenticate')).to.contain(`scope="${scope}"`);
      const only = await authed(app, ADMIN, scope);
      const allowed = await only.request(op.method, path, op.requestBody ? { body: {} } : {});
      expect([401, 403], `${op.method} ${op.path} with ${scope} alone`).not.to.include(allowed.status);
      expect(allowed.status, `${op.method} ${op.path} with ${scope} alone`).to.be.below(500);
    }
  });
});
