import { Type } from '@sinclair/typebox';
import { expect } from 'chai';
import { defineRoute } from '../../src/http/route.js';
import type { TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import { engineApi, namer } from '../helpers/engine.js';
import type { HttpClient, HttpResponse } from '../helpers/http.js';

/**
 * Hard bounds on free-form input: every value whose shape the schema leaves open is refused past
 * 16 levels, 1,000 keys and elements or 4,096-character strings, and with a reserved key, with a
 * pointer to the place, on every surface that takes one, and nothing is stored. The values are
 * sent as text: a client's JSON, not one this process would have to build (or could stringify).
 */

const FREE = '"@@free-form@@"';

/** The body, with the free-form value's JSON text where the placeholder stands. */
function bodyText(body: unknown, valueText: string): string {
  return JSON.stringify(body).replace(FREE, () => valueText);
}
const PLACEHOLDER = JSON.parse(FREE) as string;

interface Value {
  text: string;
  /** Where a refusal points, relative to the value. */
  pointer: string;
  message: string;
}

/**
 * `levels` levels, the outermost an object: `{"a":{"a":...}}`, or `{"a":[[...]]}`. The pointer
 * names the container at level 17.
 */
function nested(levels: number, inner: 'objects' | 'arrays'): Value {
  const message = 'is nested more than 16 levels deep';
  if (inner === 'objects') {
    return { text: `${'{"a":'.repeat(levels)}"x"${'}'.repeat(levels)}`, pointer: '/a'.repeat(16), message };
  }
  return {
    text: `{"a":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`,
    pointer: `/a${'/0'.repeat(15)}`,
    message,
  };
}

/** Ten keys holding arrays of strings: `total` keys and elements in all. */
function entries(total: number): string {
  const value: Record<string, string[]> = {};
  for (let k = 0; k < 10; k += 1) value[`k${k}`] = [];
  for (let i = 0; i < total - 10; i += 1) value[`k${i % 10}`]!.push('v');
  return JSON.stringify(value);
}

const TOO_MANY = 'has more than 1,000 keys and elements in all';

const HOSTILE: { name: string; value: Value }[] = [
  { name: '17 levels', value: nested(17, 'objects') },
  { name: 'a value nested 12,000 levels deep', value: nested(12_000, 'objects') },
  { name: 'a value nested 100,000 levels deep (arrays)', value: nested(100_000, 'arrays') },
  { name: '1,001 keys and elements', value: { text: entries(1001), pointer: '', message: TOO_MANY } },
  {
    name: 'a string of 4,097 characters',
    value: {
      text: JSON.stringify({ s: 'x'.repeat(4097) }),
      pointer: '/s',
      message: 'is longer than 4,096 characters',
    },
  },
  ...['__proto__', 'constructor', 'prototype'].map((key) => ({
    name: `the key ${key}`,
    value: { text: `{"${key}":"x"}`, pointer: `/${key}`, message: 'is a reserved key' },
  })),
  {
    name: 'a reserved key further down',
    value: { text: '{"a":[{"prototype":"x"}]}', pointer: '/a/0/prototype', message: 'is a reserved key' },
  },
];

const BOUNDARY = {
  depth: { name: 'exactly 16 levels', text: nested(16, 'objects').text },
  entries: { name: 'exactly 1,000 keys and elements', text: entries(1000) },
  string: { name: 'a string of exactly 4,096 characters', text: JSON.stringify({ s: 'x'.repeat(4096) }) },
};
type Boundary = keyof typeof BOUNDARY;

interface Surface {
  name: string;
  /** Where the free-form value sits in the request. */
  at: string;
  send(valueText: string): Promise<HttpResponse>;
  /** What a refused request must leave as it was. */
  state(): Promise<unknown>;
  /** Errors in the AuthZEN format (a plain message) rather than problem details. */
  authzen?: boolean;
  /**
   * The schema fixes the shape of the values (attributes, metadata): a value breaking a bound may
   * break it too, so only the pointer of the refusal is checked, not its message.
   */
  shaped?: boolean;
  /** The bounds this surface can be taken up to, and the status it then answers. */
  accepts?: { status: number; bounds: Boundary[] };
}

describe('bounds on free-form input', () => {
  let app: TestApp;
  let api: HttpClient;
  const { uniq, type } = namer();
  let world: ReturnType<typeof engineApi>;
  let principalId: string;
  let policyId: string;
  let resourceType: string;

  const fx = useApp({
    env: { RATE_LIMIT_BULK: '1000000' },
    extraRoutes: [
      defineRoute({
        method: 'GET',
        path: '/v1/_limits/unserialisable',
        operationId: 'limitsUnserialisable',
        summary: 'A response body JSON cannot express (test only)',
        tags: ['Test'],
        auth: 'public',
        rateLimit: 'standard',
        responses: { 200: { description: 'Never sent', schema: Type.Object({ count: Type.Unknown() }) } },
        handler: () => ({ body: { count: 1n } }),
      }),
    ],
  });

  before(async () => {
    app = fx.app;
    const log = app.runtime.engine.log;
    const record = log.record.bind(log);
    log.record = (decision) => {
      recorded += 1;
      record(decision);
    };
    api = fx.api;
    world = engineApi(api, uniq);
    principalId = (await world.principal('SERVICE_ACCOUNT', { team: 'payments' })).id as string;
    resourceType = type();
    policyId = (
      await world.policy({
        subjects: { principals: [principalId] },
        resources: [{ type: resourceType, identifier: '*' }],
      })
    ).id as string;
  });

  const sendWith = (method: string, path: string, body: unknown) => (valueText: string) =>
    api.request(method, path, {
      raw: bodyText(body, valueText),
      headers: { 'Content-Type': 'application/json' },
    });

  /** Decisions recorded, stored or still queued. */
  /** Decisions handed to the decision log since the app started, however it stores them. */
  let recorded = 0;
  const decisionsRecorded = async (): Promise<number> => recorded;
  const total = async (path: string): Promise<number> => {
    const res = await api.get(`${path}?limit=1`);
    expect(res.status, res.text).to.equal(200);
    return res.body.pagination.total as number;
  };
  /** What a write would change (risk scores move on their own, so they are left out). */
  const snapshot = async (path: string, fields: string[]): Promise<unknown> => {
    const res = await api.get(path);
    expect(res.status, res.text).to.equal(200);
    return [res.headers.get('etag'), ...fields.map((f) => (res.body as Record<string, unknown>)[f])];
  };
  const principalState = () =>
    snapshot(`/v1/principals/${principalId}`, ['attributes', 'metadata', 'name', 'updated_at']);
  const policyState = () =>
    snapshot(`/v1/policies/${policyId}`, ['version', 'conditions', 'name', 'updated_at']);

  const request = (extra: Record<string, unknown> = {}) => ({
    principal_id: principalId,
    action: 'read',
    resource: { type: resourceType, identifier: 'x', ...((extra['resource'] as object) ?? {}) },
    ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'resource')),
  });
  const policyBody = (extra: Record<string, unknown> = {}) => ({
    name: uniq('bounded'),
    effect: 'allow',
    subjects: { principals: [principalId] },
    actions: ['read'],
    resources: [{ type: resourceType, identifier: 'x' }],
    ...extra,
  });
  const subject = () => ({ type: 'service_account', id: principalId });
  const action = { name: 'read' };
  const resource = () => ({ type: resourceType, id: 'x' });

  const surfaces = (): Surface[] => [
    {
      name: 'POST /v1/decisions/evaluate, context',
      at: '/context',
      send: (v) => sendWith('POST', '/v1/decisions/evaluate', request({ context: PLACEHOLDER }))(v),
      state: decisionsRecorded,
      accepts: { status: 200, bounds: ['depth', 'entries', 'string'] },
    },
    {
      name: 'POST /v1/decisions/evaluate, resource.attributes',
      at: '/resource/attributes',
      send: (v) =>
        sendWith('POST', '/v1/decisions/evaluate', request({ resource: { attributes: PLACEHOLDER } }))(v),
      state: decisionsRecorded,
      shaped: true,
      accepts: { status: 200, bounds: ['entries'] },
    },
    {
      name: 'POST /v1/decisions/evaluate, action.properties',
      at: '/action/properties',
      send: (v) =>
        sendWith(
          'POST',
          '/v1/decisions/evaluate',
          request({ action: { name: 'read', properties: PLACEHOLDER } }),
        )(v),
      state: decisionsRecorded,
      accepts: { status: 200, bounds: ['depth', 'entries', 'string'] },
    },
    {
      name: 'POST /v1/decisions/evaluate, subject_properties',
      at: '/subject_properties',
      send: (v) =>
        sendWith('POST', '/v1/decisions/evaluate', request({ subject_properties: PLACEHOLDER }))(v),
      state: decisionsRecorded,
      accepts: { status: 200, bounds: ['depth', 'entries', 'string'] },
    },
    {
      name: 'POST /v1/decisions/batch, a request context',
      at: '/requests/1/context',
      send: (v) =>
        sendWith('POST', '/v1/decisions/batch', { requests: [request(), request({ context: PLACEHOLDER })] })(
          v,
        ),
      state: decisionsRecorded,
      accepts: { status: 200, bounds: ['depth', 'entries', 'string'] },
    },
    {
      name: 'POST /v1/policies/{id}/simulate, a request context',
      at: '/requests/0/context',
      send: (v) =>
        sendWith('POST', `/v1/policies/${policyId}/simulate`, {
          requests: [request({ context: PLACEHOLDER })],
        })(v),
      state: async () => [await decisionsRecorded(), await policyState()],
      accepts: { status: 200, bounds: ['depth', 'entries', 'string'] },
    },
    {
      name: 'POST /v1/policies/{id}/simulate, the proposed conditions',
      at: '/policy/conditions',
      send: (v) =>
        sendWith('POST', `/v1/policies/${policyId}/simulate`, {
          policy: policyBody({ conditions: PLACEHOLDER }),
        })(v),
      state: policyState,
    },
    {
      name: 'POST /v1/policies, conditions',
      at: '/conditions',
      send: (v) => sendWith('POST', '/v1/policies', policyBody({ conditions: PLACEHOLDER }))(v),
      state: () => total('/v1/policies'),
    },
    {
      name: 'PUT /v1/policies/{id}, conditions',
      at: '/conditions',
      send: (v) => sendWith('PUT', `/v1/policies/${policyId}`, policyBody({ conditions: PLACEHOLDER }))(v),
      state: policyState,
    },
    {
      name: 'POST /v1/principals, attributes',
      at: '/attributes',
      send: (v) =>
        sendWith('POST', '/v1/principals', { type: 'AI_AGENT', name: uniq('p'), attributes: PLACEHOLDER })(v),
      state: () => total('/v1/principals'),
      shaped: true,
      accepts: { status: 201, bounds: ['entries'] },
    },
    {
      name: 'POST /v1/principals, metadata',
      at: '/metadata',
      send: (v) =>
        sendWith('POST', '/v1/principals', { type: 'AI_AGENT', name: uniq('p'), metadata: PLACEHOLDER })(v),
      state: () => total('/v1/principals'),
      shaped: true,
    },
    {
      name: 'PATCH /v1/principals/{id}, attributes',
      at: '/attributes',
      send: (v) => sendWith('PATCH', `/v1/principals/${principalId}`, { attributes: PLACEHOLDER })(v),
      state: principalState,
      shaped: true,
      accepts: { status: 200, bounds: ['entries'] },
    },
    {
      name: 'PATCH /v1/principals/{id}, metadata',
      at: '/metadata',
      send: (v) => sendWith('PATCH', `/v1/principals/${principalId}`, { metadata: PLACEHOLDER })(v),
      state: principalState,
      shaped: true,
    },
    {
      name: 'PUT /v1/resources/{type}/{identifier}, attributes',
      at: '/attributes',
      send: (v) =>
        sendWith('PUT', `/v1/resources/${resourceType}/${uniq('r')}`, { attributes: PLACEHOLDER })(v),
      state: () => total('/v1/resources'),
      shaped: true,
      accepts: { status: 201, bounds: ['entries'] },
    },
    {
      name: 'POST /v1/audit/reports, parameters',
      at: '/parameters',
      send: (v) =>
        sendWith('POST', '/v1/audit/reports', { type: 'audit_log', format: 'json', parameters: PLACEHOLDER })(
          v,
        ),
      state: () => total('/v1/audit/reports'),
    },
    ...(['subject', 'resource', 'action'] as const).map((entity): Surface => ({
      name: `POST /access/v1/evaluation, ${entity}.properties`,
      at: `/${entity}/properties`,
      authzen: true,
      send: (v) =>
        sendWith('POST', '/access/v1/evaluation', {
          subject: subject(),
          action,
          resource: resource(),
          [entity]: {
            ...{ subject: subject(), action, resource: resource() }[entity],
            properties: PLACEHOLDER,
          },
        })(v),
      state: decisionsRecorded,
      accepts: { status: 200, bounds: ['depth', 'entries', 'string'] },
    })),
    {
      name: 'POST /access/v1/evaluation, context',
      at: '/context',
      authzen: true,
      send: (v) =>
        sendWith('POST', '/access/v1/evaluation', {
          subject: subject(),
          action,
          resource: resource(),
          context: PLACEHOLDER,
        })(v),
      state: decisionsRecorded,
      accepts: { status: 200, bounds: ['depth', 'entries', 'string'] },
    },
    {
      name: 'POST /access/v1/evaluations, an evaluation context',
      at: '/evaluations/1/context',
      authzen: true,
      send: (v) =>
        sendWith('POST', '/access/v1/evaluations', {
          subject: subject(),
          action,
          evaluations: [{ resource: resource() }, { resource: resource(), context: PLACEHOLDER }],
        })(v),
      state: decisionsRecorded,
      accepts: { status: 200, bounds: ['depth', 'entries', 'string'] },
    },
    {
      name: 'POST /access/v1/search/subject, context',
      at: '/context',
      authzen: true,
      send: (v) =>
        sendWith('POST', '/access/v1/search/subject', {
          subject: { type: 'service_account' },
          action,
          resource: resource(),
          context: PLACEHOLDER,
        })(v),
      state: decisionsRecorded,
      accepts: { status: 200, bounds: ['depth', 'entries', 'string'] },
    },
    {
      name: 'POST /access/v1/search/resource, context',
      at: '/context',
      authzen: true,
      send: (v) =>
        sendWith('POST', '/access/v1/search/resource', {
          subject: subject(),
          action,
          resource: { type: resourceType },
          context: PLACEHOLDER,
        })(v),
      state: decisionsRecorded,
      accepts: { status: 200, bounds: ['depth', 'entries', 'string'] },
    },
    {
      name: 'POST /access/v1/search/action, context',
      at: '/context',
      authzen: true,
      send: (v) =>
        sendWith('POST', '/access/v1/search/action', {
          subject: subject(),
          resource: resource(),
          context: PLACEHOLDER,
        })(v),
      state: decisionsRecorded,
      accepts: { status: 200, bounds: ['depth', 'entries', 'string'] },
    },
  ];

  /** The refusal each surface documents, pointing at the offending place. */
  function expectRefused(
    surface: Pick<Surface, 'at' | 'authzen' | 'shaped'>,
    res: HttpResponse,
    value: Pick<Value, 'pointer' | 'message'>,
  ): void {
    const pointer = `${surface.at}${value.pointer}`;
    const shown = res.text.slice(0, 2000);
    expect(res.status, shown).to.equal(400);
    expect(res.headers.get('x-request-id')).to.be.a('string');
    if (surface.authzen) {
      expect(res.headers.get('content-type')).to.match(/^text\/plain/);
      expect(res.text).to.include(`${pointer} ${value.message}`);
      return;
    }
    expect(res.headers.get('content-type')).to.match(/^application\/problem\+json/);
    expect(res.body).to.include({ status: 400, code: 'VALIDATION_FAILED' });
    expect(res.body.request_id).to.equal(res.headers.get('x-request-id'));
    const errors = res.body.errors as { pointer: string; message: string }[];
    const found = errors.find((e) => e.pointer === pointer);
    expect(found, `no error at ${pointer}: ${JSON.stringify(errors).slice(0, 2000)}`).to.not.equal(undefined);
    if (!surface.shaped) expect(found!.message).to.equal(value.message);
  }

  it('sees the decision an accepted request records, so that a refusal recording none means something', async () => {
    const before = await decisionsRecorded();
    const res = await sendWith(
      'POST',
      '/v1/decisions/evaluate',
      request({ context: PLACEHOLDER }),
    )('{"ip":"10.0.0.1"}');
    expect(res.status, res.text).to.equal(200);
    expect(await decisionsRecorded()).to.equal(before + 1);
  });

  // Built now for their names; what they send reads the ids `before` makes when they run.
  for (const surface of surfaces()) {
    describe(surface.name, () => {
      for (const { name, value } of HOSTILE) {
        it(`refuses ${name} with a pointer, and changes nothing`, async () => {
          const before = await surface.state();
          expectRefused(surface, await surface.send(value.text), value);
          expect(await surface.state()).to.deep.equal(before);
        });
      }
      for (const bound of surface.accepts?.bounds ?? []) {
        it(`accepts ${BOUNDARY[bound].name}`, async () => {
          const res = await surface.send(BOUNDARY[bound].text);
          expect(res.status, res.text.slice(0, 2000)).to.equal(surface.accepts!.status);
        });
      }
    });
  }

  describe('keys and paths clients name', () => {
    it('refuses an attribute named __proto__ instead of storing a principal without it', async () => {
      const before = await total('/v1/principals');
      const res = await sendWith('POST', '/v1/principals', {
        type: 'AI_AGENT',
        name: uniq('proto'),
        attributes: PLACEHOLDER,
      })('{"team":"payments","__proto__":"x"}');
      expectRefused({ at: '/attributes' }, res, { pointer: '/__proto__', message: 'is a reserved key' });
      expect(await total('/v1/principals')).to.equal(before);
    });

    it('refuses condition paths and $ref operands naming a reserved key, and keeps the others', async () => {
      const before = await total('/v1/policies');
      const create = (conditions: string) =>
        sendWith('POST', '/v1/policies', policyBody({ conditions: PLACEHOLDER }))(conditions);
      const at = { at: '/conditions' };
      expectRefused(at, await create('{"context.constructor":{"$exists":true}}'), {
        pointer: '/context.constructor',
        message: 'names the reserved key constructor',
      });
      expectRefused(at, await create('{"principal.attributes.__proto__":"x"}'), {
        pointer: '/principal.attributes.__proto__',
        message: 'names the reserved key __proto__',
      });
      expectRefused(at, await create('{"context.team":{"$eq":{"$ref":"principal.attributes.prototype"}}}'), {
        pointer: '/context.team/$eq/$ref',
        message: 'names the reserved key prototype',
      });
      expect(await total('/v1/policies')).to.equal(before);
      const kept = await create('{"context.constructor_id":{"$exists":true}}');
      expect(kept.status, kept.text).to.equal(201);
    });

    it('refuses a reserved attribute key in a policy match and in a principal search', async () => {
      const before = await total('/v1/policies');
      const policy = await sendWith(
        'POST',
        '/v1/policies',
        policyBody({ subjects: { match: { attributes: PLACEHOLDER } } }),
      )('{"constructor":{"$exists":true}}');
      expectRefused({ at: '/subjects/match/attributes' }, policy, {
        pointer: '/constructor',
        message: 'is a reserved key',
      });
      expect(await total('/v1/policies')).to.equal(before);
      const search = await sendWith('POST', '/v1/principals/search', { query: { attributes: PLACEHOLDER } })(
        '{"__proto__":"x"}',
      );
      expectRefused({ at: '/query/attributes' }, search, {
        pointer: '/__proto__',
        message: 'is a reserved key',
      });
    });
  });

  describe('whole bodies', () => {
    it('refuses an AuthZEN member it would ignore when nested deeper than 32 levels, and takes 32', async () => {
      const before = await decisionsRecorded();
      // The body is level 1 and `subject` level 2: a member of `subject` nested `n` deep ends at n + 2.
      const withMember = (levels: number) =>
        sendWith('POST', '/access/v1/evaluation', {
          subject: { ...subject(), extension: PLACEHOLDER },
          action,
          resource: resource(),
        })(`${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`);
      for (const levels of [31, 100_000]) {
        const res = await withMember(levels);
        expect(res.status, res.text.slice(0, 500)).to.equal(400);
        expect(res.text).to.include(
          `/subject/extension${'/a'.repeat(30)} is nested more than 32 levels deep`,
        );
      }
      expect(await decisionsRecorded()).to.equal(before);
      const taken = await withMember(30);
      expect(taken.status, taken.text).to.equal(200);
    });

    it('answers a list that must hold unique items, of deeply nested or a million entries, with 400', async () => {
      const before = await total('/v1/clients');
      const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
      for (const scopes of [`[${deep},${deep}]`, `[${new Array(400_000).fill('0').join(',')}]`]) {
        const res = await sendWith('POST', '/v1/clients', { name: uniq('c'), scopes: PLACEHOLDER })(scopes);
        expect(res.status, res.text.slice(0, 500)).to.equal(400);
        expect(res.body.code).to.equal('VALIDATION_FAILED');
        expect(res.body.errors[0].pointer).to.match(/^\/scopes/);
      }
      expect(await total('/v1/clients')).to.equal(before);
    });
  });

  describe('responses', () => {
    it('answers a body that cannot be serialised with a problem carrying the request id', async () => {
      const res = await app.http.get('/v1/_limits/unserialisable', {
        headers: { 'X-Request-Id': 'limits-1' },
      });
      expect(res.status).to.equal(500);
      expect(res.headers.get('content-type')).to.match(/^application\/problem\+json/);
      expect(res.headers.get('x-request-id')).to.equal('limits-1');
      expect(res.body).to.include({ status: 500, code: 'INTERNAL', request_id: 'limits-1' });
      expect(res.text).to.not.match(/BigInt/);
      const logged = app.logs.entries().filter((e) => e['request_id'] === 'limits-1');
      expect(logged.map((e) => e['msg'])).to.include.members(['request failed', 'request completed']);
      const completed = logged.find((e) => e['msg'] === 'request completed')!;
      expect(completed['res']).to.deep.equal({ status: 500, length: Buffer.byteLength(res.text) });
    });
  });

  describe('the OpenAPI document', () => {
    type Schema = Record<string, unknown>;
    let document: {
      paths: Record<string, Record<string, Schema>>;
      components: { schemas: Record<string, Schema> };
    };
    before(() => {
      document = app.server.app.openapi as typeof document;
    });

    const resolve = (schema: Schema): Schema => {
      const ref = schema['$ref'];
      if (typeof ref !== 'string') return schema;
      return document.components.schemas[ref.replace('#/components/schemas/', '')]!;
    };

    /** Every JSON and form request body, except SCIM's (bounded by its own rules). */
    const bodies = (): { operation: string; schema: Schema; authzen: boolean }[] =>
      Object.entries(document.paths).flatMap(([path, item]) =>
        Object.entries(item).flatMap(([method, op]) => {
          const content = (op['requestBody'] as { content?: Record<string, { schema: Schema }> } | undefined)
            ?.content;
          const entry = content?.['application/json'] ?? content?.['application/x-www-form-urlencoded'];
          if (!entry || path.startsWith('/scim/')) return [];
          return [
            {
              operation: `${method.toUpperCase()} ${path}`,
              schema: entry.schema,
              authzen: path.startsWith('/access/'),
            },
          ];
        }),
      );

    /** Calls `visit` on every schema below `schema`, with whether a free-form bound covers it. */
    function walk(
      schema: Schema,
      at: string,
      visit: (s: Schema, at: string, bounded: boolean) => void,
      bounded = false,
    ): void {
      const s = resolve(schema);
      const covered = bounded || s['x-free-form'] !== undefined;
      visit(s, at, covered);
      for (const [key, child] of Object.entries(s)) {
        // Keys are bounded by their pattern, or, in open values, by the free-form bounds.
        if (['x-free-form', 'examples', 'default', 'propertyNames'].includes(key)) continue;
        if (Array.isArray(child)) {
          child.forEach((c, i) => {
            if (c && typeof c === 'object') walk(c as Schema, `${at}/${key}/${i}`, visit, covered);
          });
        } else if (child && typeof child === 'object') {
          if (key === 'properties' || key === 'patternProperties') {
            for (const [name, sub] of Object.entries(child as Record<string, Schema>)) {
              walk(sub, `${at}/${key}/${name}`, visit, covered);
            }
          } else {
            walk(child as Schema, `${at}/${key}`, visit, covered);
          }
        }
      }
    }

    /** Anchored, and no `*`, `+` or `{n,}` outside escapes and character classes. */
    const boundedPattern = (pattern: string): boolean =>
      pattern.startsWith('^') &&
      pattern.endsWith('$') &&
      !/[*+]|\{\d+,\}/.test(pattern.replace(/\\./g, '').replace(/\[(?:\\.|[^\]])*\]/g, 'c'));

    it('bounds every string a request body may carry to 4,096 characters at most', () => {
      const unbounded: string[] = [];
      let strings = 0;
      for (const { operation, schema } of bodies()) {
        walk(schema, '', (s, at) => {
          if (s['type'] !== 'string' || s['enum'] !== undefined || s['const'] !== undefined) return;
          strings += 1;
          const max = s['maxLength'];
          const ok =
            typeof max === 'number'
              ? max <= 4096
              : typeof s['pattern'] === 'string' && boundedPattern(s['pattern']);
          if (!ok) unbounded.push(`${operation} ${at}`);
        });
      }
      expect(strings, 'free strings looked at').to.be.greaterThan(0);
      expect(unbounded).to.deep.equal([]);
    });

    it('puts every value of open shape under the free-form bounds', () => {
      const open: string[] = [];
      let looked = 0;
      for (const { operation, schema, authzen } of bodies()) {
        walk(schema, '', (s, at, bounded) => {
          looked += 1;
          if (bounded) return;
          const shapeless = ['type', '$ref', 'anyOf', 'oneOf', 'allOf', 'enum', 'const', 'not'].every(
            (k) => s[k] === undefined,
          );
          const declared = Object.keys((s['properties'] as object | undefined) ?? {}).length > 0;
          const openObject =
            s['type'] === 'object' &&
            s['additionalProperties'] !== false &&
            typeof s['additionalProperties'] !== 'object' &&
            s['patternProperties'] === undefined &&
            // AuthZEN objects take members they do not know and ignore them, as the standard asks.
            !(authzen && declared);
          if (shapeless || openObject) open.push(`${operation} ${at}`);
        });
      }
      expect(looked, 'schemas looked at').to.be.greaterThan(0);
      expect(open).to.deep.equal([]);
    });

    it('asks uniqueness only of items of a scalar type (compared in linear time, never deeply)', () => {
      const deep: string[] = [];
      let unique = 0;
      for (const { operation, schema } of bodies()) {
        walk(schema, '', (s, at) => {
          if (s['uniqueItems'] !== true) return;
          unique += 1;
          const items = resolve((s['items'] as Schema | undefined) ?? {});
          if (!['string', 'number', 'integer', 'boolean'].includes(items['type'] as string))
            deep.push(`${operation} ${at}`);
        });
      }
      expect(unique, 'arrays asking uniqueness').to.be.greaterThan(0);
      expect(deep).to.deep.equal([]);
    });
  });
});
