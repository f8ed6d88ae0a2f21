import net from 'node:net';
import { expect } from 'chai';
import type { TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import { ADMIN, tokenFor } from '../helpers/auth.js';
import type { HttpClient } from '../helpers/http.js';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends one request as raw bytes and reads the answer until the server closes the connection:
 * fetch may fail writing a request the server has already refused, before reading its answer.
 */
function rawRequest(port: number, request: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) {
        reject(new Error(`no complete response: ${JSON.stringify(text.slice(0, 200))}`));
        return;
      }
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: text.slice(end + 4) });
    });
    socket.write(request);
  });
}

describe('request line and headers over 16 KB', () => {
  let app: TestApp;
  let admin: HttpClient;
  let token: string;
  const fx = useApp();
  before(async () => {
    app = fx.app;
    token = (await tokenFor(app.http, ADMIN)).access_token;
    admin = app.http.withToken(token);
  });

  const principalCount = async (): Promise<number> => {
    const res = await admin.get('/v1/principals?limit=1');
    expect(res.status, res.text).to.equal(200);
    return res.body.pagination.total as number;
  };

  it('answers 431 in problem details, and the request does nothing', async () => {
    const before = await principalCount();
    const body = JSON.stringify({ type: 'SERVICE_ACCOUNT', name: 'never-created' });
    const res = await rawRequest(
      app.server.address.port,
      [
        'POST /v1/principals HTTP/1.1',
        'Host: 127.0.0.1',
        `Authorization: Bearer ${token}`,
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        `X-Padding: ${'p'.repeat(20 * 1024)}`,
        '',
        body,
      ].join('\r\n'),
    );
    expect(res.status).to.equal(431);
    expect(res.headers['content-type']).to.match(/^application\/problem\+json/);
    expect(res.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
    const problem = JSON.parse(res.body) as Record<string, unknown>;
    expect(problem).to.deep.equal({
      type: 'about:blank',
      title: 'Request Header Fields Too Large',
      status: 431,
      detail: 'the request line and headers exceed 16384 bytes',
      instance: '/v1/principals',
      code: 'REQUEST_HEADER_FIELDS_TOO_LARGE',
      request_id: res.headers['x-request-id'],
    });
    expect(await principalCount()).to.equal(before);
    const names = await admin.post('/v1/principals/search', { query: { name: 'never-created' } });
    expect(names.body.pagination.total).to.equal(0);
  });

  it('answers 431 to a fetch too, and still serves headers just under the limit', async () => {
    const refused = await app.http.get('/v1/openapi.json', {
      headers: { 'X-Padding': 'p'.repeat(20 * 1024) },
    });
    expect(refused.status).to.equal(431);
    expect(refused.body.code).to.equal('REQUEST_HEADER_FIELDS_TOO_LARGE');
    expect(refused.body.instance).to.equal('/v1/openapi.json');
    const fine = await app.http.get('/v1/openapi.json', { headers: { 'X-Padding': 'p'.repeat(15 * 1024) } });
    expect(fine.status).to.equal(200);
  });

  it('documents 431 on every operation', async () => {
    const doc = (await app.http.get('/v1/openapi.json')).body;
    const missing: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(item)) {
        const documented = op.responses['431'];
        if (!documented?.content?.['application/problem+json'])
          missing.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(missing).to.deep.equal([]);
  });
});
