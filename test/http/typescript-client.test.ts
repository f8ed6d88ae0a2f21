import { expect } from 'chai';
import {
  clientCredentialsToken,
  createPasClient,
  PasApiError,
  requestToken,
  unwrap,
} from '../../clients/typescript/src/index.js';
import { ADMIN_CLIENT_ID, ADMIN_CLIENT_SECRET } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';

/**
 * The TypeScript client (clients/typescript) against the real service: typed calls, tokens by the
 * client credentials grant, and error answers turned into PasApiError with their problem details.
 */
describe('TypeScript client', () => {
  const fx = useApp();
  const credentials = () => ({
    baseUrl: fx.app.config.publicBaseUrl,
    clientId: ADMIN_CLIENT_ID,
    clientSecret: ADMIN_CLIENT_SECRET,
  });

  /** A fetch that counts the requests to each path before passing them on. */
  function countingFetch(): { fetch: typeof fetch; calls: Map<string, number> } {
    const calls = new Map<string, number>();
    const counting = (input: Request | string | URL, init?: RequestInit): Promise<Response> => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      calls.set(url.pathname, (calls.get(url.pathname) ?? 0) + 1);
      return fetch(input, init);
    };
    return { fetch: counting, calls };
  }

  it('creates, reads and decides through typed calls, with a token from the client credentials grant', async () => {
    const pas = createPasClient({
      baseUrl: `${fx.app.config.publicBaseUrl}/`,
      token: clientCredentialsToken(credentials()),
    });
    const created = unwrap(
      await pas.POST('/v1/principals', {
        body: { type: 'SERVICE_ACCOUNT', name: 'typed-client-sa', attributes: { team: 'billing' } },
      }),
    );
    expect(created.id).to.match(/^prn_/);
    const read = unwrap(await pas.GET('/v1/principals/{id}', { params: { path: { id: created.id } } }));
    expect(read).to.include({ id: created.id, name: 'typed-client-sa', type: 'SERVICE_ACCOUNT' });
    expect(read.attributes).to.deep.equal({ team: 'billing' });

    const decision = unwrap(
      await pas.POST('/v1/decisions/evaluate', {
        body: { principal_id: created.id, action: 'read', resource: { type: 'database', identifier: 'x' } },
      }),
    );
    expect(decision).to.include({ decision: 'DENY', allowed: false });
    expect(decision.reasons.map((r) => r.code)).to.deep.equal(['NO_MATCHING_POLICY']);
  });

  it('asks for a token once and keeps it for the requests that follow, concurrent ones included', async () => {
    const { fetch: counting, calls } = countingFetch();
    const token = clientCredentialsToken({ ...credentials(), fetch: counting });
    const pas = createPasClient({ baseUrl: fx.app.config.publicBaseUrl, token, fetch: counting });
    await Promise.all(
      Array.from({ length: 5 }, async () =>
        unwrap(await pas.GET('/v1/principals', { params: { query: { limit: 1 } } })),
      ),
    );
    unwrap(await pas.GET('/v1/principals', {}));
    expect(calls.get('/v1/auth/token')).to.equal(1);
    expect(calls.get('/v1/principals')).to.equal(6);
  });

  it('takes a token as a string, and sends none without one', async () => {
    const answer = await requestToken({ ...credentials(), scope: 'principals:read' });
    expect(answer).to.include({ token_type: 'Bearer', scope: 'principals:read' });
    const pas = createPasClient({ baseUrl: fx.app.config.publicBaseUrl, token: answer.access_token });
    expect(unwrap(await pas.GET('/v1/principals', {})).pagination.page).to.equal(1);

    const anonymous = createPasClient({ baseUrl: fx.app.config.publicBaseUrl });
    const refused = await anonymous.GET('/v1/principals', {});
    expect(refused.response.status).to.equal(401);
    expect(refused.error).to.include({ code: 'UNAUTHENTICATED' });
  });

  it('turns an error answer into a PasApiError carrying the problem details', async () => {
    const pas = createPasClient({
      baseUrl: fx.app.config.publicBaseUrl,
      token: clientCredentialsToken(credentials()),
    });
    const missing = await pas.GET('/v1/principals/{id}', {
      params: { path: { id: 'prn_01JD0000000000000000000000' } },
    });
    let thrown: unknown;
    try {
      unwrap(missing);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).to.be.instanceOf(PasApiError);
    const error = thrown as PasApiError;
    expect(error.status).to.equal(404);
    expect(error.code).to.equal('NOT_FOUND');
    expect(error.problem?.title).to.equal('Not Found');
    expect(error.message).to.match(/^Not Found: .+\n {2}\(request [^)]+\)$/);

    const invalid = await pas.POST('/v1/principals', {
      body: { type: 'SERVICE_ACCOUNT', name: '' },
    });
    expect(() => unwrap(invalid))
      .to.throw(PasApiError)
      .with.property('message')
      .that.includes('/name');
  });

  it('reports refused client credentials with the OAuth error', async () => {
    const failure = await requestToken({ ...credentials(), clientSecret: 'not-the-secret' }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failure).to.be.instanceOf(PasApiError);
    expect(failure).to.include({ status: 401, oauthError: 'invalid_client' });
    expect((failure as PasApiError).code).to.equal('invalid_client');
  });
});
