import { expect } from 'chai';
import { edgeRoutes } from '../helpers/edge-routes.js';
import type { TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';

const ID = 'prn_01JD0000000000000000000000';

function expectProblem(
  res: { status: number; headers: Headers; body: any },
  status: number,
  code: string,
): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.headers.get('content-type')).to.match(/^application\/problem\+json/);
  expect(res.body).to.include({ status, code, type: 'about:blank' });
  expect(res.body.title).to.be.a('string');
  expect(res.body.detail).to.be.a('string');
  expect(res.body.request_id).to.equal(res.headers.get('x-request-id'));
}

describe('HTTP edge', () => {
  let app: TestApp;
  const fx = useApp({ extraRoutes: edgeRoutes(() => app.runtime.db) });
  before(async () => {
    app = fx.app;
  });

  describe('request ids', () => {
    it('echoes a well-formed X-Request-Id', async () => {
      const res = await app.http.get('/healthz', { headers: { 'X-Request-Id': 'abc-123.XYZ' } });
      expect(res.headers.get('x-request-id')).to.equal('abc-123.XYZ');
    });

    it('replaces a malformed or oversized one', async () => {
      for (const bad of ['has space', '<script>', 'x'.repeat(200)]) {
        const res = await app.http.get('/healthz', { headers: { 'X-Request-Id': bad } });
        expect(res.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
      }
    });

    it('generates one when absent, on errors too', async () => {
      const res = await app.http.get('/v1/nowhere');
      expect(res.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    });
  });

  describe('bodies', () => {
    it('accepts a valid request and hands the handler validated input, unknown parameters left out', async () => {
      const res = await app.http.post(`/v1/_edge/echo/${ID}?limit=5&flag=true&unknown=1`, { name: 'n' });
      expect(res.status).to.equal(201);
      expect(res.body.query).to.deep.equal({ limit: 5, flag: true });
    });

    it('answers malformed JSON with 400 MALFORMED_JSON', async () => {
      const res = await app.http.post(`/v1/_edge/echo/${ID}`, undefined, {
        raw: '{"name": "x",',
        headers: { 'Content-Type': 'application/json' },
      });
      expectProblem(res, 400, 'MALFORMED_JSON');
    });

    it('rejects a JSON scalar body as malformed (objects only)', async () => {
      const res = await app.http.post(`/v1/_edge/echo/${ID}`, undefined, {
        raw: '"just a string"',
        headers: { 'Content-Type': 'application/json' },
      });
      expectProblem(res, 400, 'MALFORMED_JSON');
    });

    it('answers a non-JSON content type with 415', async () => {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
        const res = await app.http.post(`/v1/_edge/echo/${ID}`, undefined, {
          raw: 'name=x',
          headers: { 'Content-Type': type },
        });
        expectProblem(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
      }
    });

    it('answers a body over 1 MiB with 413', async () => {
      const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) });
      const res = await app.http.post(`/v1/_edge/echo/${ID}`, undefined, {
        raw: big,
        headers: { 'Content-Type': 'application/json' },
      });
      expectProblem(res, 413, 'PAYLOAD_TOO_LARGE');
    });

    it('answers a chunked body over 1 MiB with 413 as well', async () => {
      const chunk = Buffer.from('x'.repeat(64 * 1024));
      const stream = new ReadableStream({
        start(controller) {
          controller.enqueue(Buffer.from('{"name":"'));
          for (let i = 0; i < 20; i += 1) controller.enqueue(chunk);
          controller.enqueue(Buffer.from('"}'));
          controller.close();
        },
      });
      const response = await fetch(`${app.http.baseUrl}/v1/_edge/echo/${ID}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: stream,
        duplex: 'half',
      });
      expect(response.status).to.equal(413);
      expect(((await response.json()) as { code: string }).code).to.equal('PAYLOAD_TOO_LARGE');
    });

    it('requires a body where the operation takes one', async () => {
      const res = await app.http.post(`/v1/_edge/echo/${ID}`);
      expectProblem(res, 400, 'VALIDATION_FAILED');
    });

    it('reports schema violations with JSON Pointers, unknown fields included', async () => {
      const res = await app.http.post(`/v1/_edge/echo/${ID}`, {
        name: '',
        attributes: { team: 5 },
        created_at: '2020-01-01T00:00:00Z',
      });
      expectProblem(res, 400, 'VALIDATION_FAILED');
      const pointers = (res.body.errors as { pointer: string }[]).map((e) => e.pointer).sort();
      expect(pointers).to.deep.equal(['/attributes/team', '/created_at', '/name']);
    });
  });

  describe('query and path parameters', () => {
    it('rejects malformed query parameters with /query pointers', async () => {
      const res = await app.http.post(`/v1/_edge/echo/${ID}?limit=101&flag=perhaps`, { name: 'n' });
      expectProblem(res, 400, 'VALIDATION_FAILED');
      const pointers = (res.body.errors as { pointer: string }[]).map((e) => e.pointer).sort();
      expect(pointers).to.deep.equal(['/query/flag', '/query/limit']);
    });

    it('treats a malformed id in the path as not found', async () => {
      for (const id of [
        'garbage',
        'grp_01JD0000000000000000000000',
        "prn_' OR 1=1",
        'prn_01JD000000000000000000000U',
      ]) {
        const res = await app.http.post(`/v1/_edge/echo/${encodeURIComponent(id)}`, { name: 'n' });
        expectProblem(res, 404, 'NOT_FOUND');
      }
    });
  });

  describe('routing', () => {
    it('answers unknown routes with 404 problem', async () => {
      expectProblem(await app.http.get('/v1/does/not/exist'), 404, 'NOT_FOUND');
      expectProblem(await app.http.get('/nothing-here'), 404, 'NOT_FOUND');
    });

    it('answers a known path with the wrong method with 405 and Allow', async () => {
      const res = await app.http.delete('/v1/openapi.json');
      expectProblem(res, 405, 'METHOD_NOT_ALLOWED');
      expect(res.headers.get('allow')).to.contain('GET');
    });

    it('answers OPTIONS on a known path with the allowed methods', async () => {
      const res = await app.http.request('OPTIONS', '/v1/openapi.json');
      expect(res.status).to.equal(204);
      expect(res.headers.get('allow')).to.contain('GET');
    });
  });

  describe('failures', () => {
    it('answers an unexpected error with a generic 500 and logs it with the request id', async () => {
      const res = await app.http.get('/v1/_edge/boom');
      expectProblem(res, 500, 'INTERNAL');
      expect(res.text).not.to.contain('secret');
      expect(res.text).not.to.contain('at ');
      const logged = app.logs
        .entries()
        .find((e) => e['request_id'] === res.body.request_id && e['msg'] === 'request failed');
      expect(logged, 'the failure is logged under the request id').to.not.equal(undefined);
    });

    it('refuses to send a response that breaks its declared schema', async () => {
      const res = await app.http.get('/v1/_edge/leak');
      expectProblem(res, 500, 'INTERNAL');
      expect(res.text).not.to.contain('scrypt');
    });
  });

  describe('logging', () => {
    it('writes one structured line per request with the route template and never the Authorization header', async () => {
      const res = await app.http.post(
        `/v1/_edge/echo/${ID}?flag=true`,
        { name: 'hunter2-body' },
        {
          headers: { Authorization: 'Bearer very-secret-token' },
        },
      );
      const entry = app.logs.entries().find((e) => e['request_id'] === res.headers.get('x-request-id'));
      expect(entry).to.not.equal(undefined);
      expect(entry!['req']).to.include({ method: 'POST', route: '/v1/_edge/echo/{id}' });
      expect(entry!['res']).to.include({ status: 201 });
      expect(app.logs.text).not.to.contain('very-secret-token');
      expect(app.logs.text).not.to.contain('hunter2-body');
    });
  });
});
