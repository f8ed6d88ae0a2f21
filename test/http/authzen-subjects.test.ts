import { expect } from 'chai';
import { useApp } from '../helpers/fixture.js';
import { engineApi, namer, recordedDecision } from '../helpers/engine.js';
import { createConnector, type Connector } from '../helpers/identities.js';

const EVALUATION = '/access/v1/evaluation';
const EVALUATIONS = '/access/v1/evaluations';
const SEARCH_SUBJECT = '/access/v1/search/subject';
const SEARCH_RESOURCE = '/access/v1/search/resource';
const SEARCH_ACTION = '/access/v1/search/action';

/**
 * AuthZEN subjects of identity connectors: the ids a connector gives its users are what AuthZEN
 * callers send and get back, and no connector can make a subject that names another's principal
 * resolve to its own.
 */
describe('AuthZEN subjects from identity connectors', () => {
  const { uniq, type } = namer();
  let world: ReturnType<typeof engineApi>;
  let okta: Connector;
  let entra: Connector;

  const fx = useApp({ env: { RATE_LIMIT_BULK: '100000' } });

  before(async () => {
    world = engineApi(fx.api, uniq);
    okta = await createConnector(fx.app, fx.api, uniq('okta').replace(/[^a-z0-9-]/g, ''));
    entra = await createConnector(fx.app, fx.api, uniq('entra').replace(/[^a-z0-9-]/g, ''));
  });

  const post = async (path: string, body: unknown): Promise<any> => {
    const res = await fx.api.post(path, body);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  const ask = (subject: Record<string, unknown>, t: string, id = 'x'): Promise<any> =>
    post(EVALUATION, { subject, action: { name: 'read' }, resource: { type: t, id } });
  const codes = (answer: any): string[] => answer.context.reasons.map((r: any) => r.code);
  const recorded = (id: string): Promise<any> => recordedDecision(fx.api, id);
  /** A resource type only `principals` may read `x` of. */
  const readableBy = async (...principals: string[]): Promise<string> => {
    const t = type();
    await world.policy({ subjects: { principals }, resources: [{ type: t, identifier: 'x' }] });
    return t;
  };
  const email = (name: string): string => `${uniq(name)}@corp.example`;

  it('answers subject searches with the id the connector gave, and the principal id without one', async () => {
    const ext = uniq('00u');
    const ada = await okta.provision({ userName: email('ada'), externalId: ext });
    const noExternalId = await okta.provision({ userName: email('bo') });
    const account = await world.principal();
    const t = await readableBy(ada, noExternalId, account.id);
    const search = async (subjectType: string): Promise<string[]> =>
      (
        await post(SEARCH_SUBJECT, {
          subject: { type: subjectType },
          action: { name: 'read' },
          resource: { type: t, id: 'x' },
        })
      ).results.map((r: any) => {
        expect(r).to.have.all.keys('type', 'id');
        expect(r.type).to.equal(subjectType);
        return r.id as string;
      });
    expect((await search('user')).sort()).to.deep.equal([ext, noExternalId].sort());
    expect((await search('identity')).sort()).to.deep.equal([ext, noExternalId, account.id].sort());
    expect(await search('service_account')).to.deep.equal([account.id]);
    // Each id found is one the evaluation takes back.
    for (const id of await search('identity')) {
      expect((await ask({ type: 'identity', id }, t)).decision, id).to.equal(true);
    }
  });

  it('names a principal by id, by connector id or by email, of one connector', async () => {
    const ext = uniq('00u');
    const userName = email('cy');
    const cy = await okta.provision({ userName, externalId: ext });
    const t = await readableBy(cy);
    for (const id of [cy, ext, userName, userName.toUpperCase()]) {
      const answer = await ask({ type: 'user', id }, t);
      expect(answer.decision, id).to.equal(true);
      expect((await recorded(answer.context.id)).principal_id, id).to.equal(cy);
    }
    // A connector id is exact: another case names nobody.
    const upper = await ask({ type: 'user', id: ext.toUpperCase() }, t);
    expect(codes(upper)).to.deep.equal(['PRINCIPAL_NOT_FOUND']);
  });

  it('decides the requests an MCP gateway makes for the user its token names', async () => {
    // The gateway sends the token's subject as an identity, MCP methods as actions.
    const sub = uniq('00u');
    const user = await okta.provision({ userName: email('mcp'), externalId: sub });
    const server = uniq('mcp-server');
    const tools = uniq('crm');
    await world.policy({
      subjects: { principals: [user] },
      actions: ['initialize', 'tools/list'],
      resources: [{ type: 'mcp_server', identifier: server }],
    });
    await world.policy({
      subjects: { principals: [user] },
      actions: ['tools/call'],
      resources: [{ type: 'tool', identifier: `${tools}.get_*` }],
    });
    const decide = async (action: string, rtype: string, id: string): Promise<boolean> =>
      (
        await post(EVALUATION, {
          subject: { type: 'identity', id: sub },
          action: { name: action },
          resource: { type: rtype, id },
        })
      ).decision as boolean;
    expect(await decide('initialize', 'mcp_server', server)).to.equal(true);
    expect(await decide('tools/list', 'mcp_server', server)).to.equal(true);
    expect(await decide('prompts/list', 'mcp_server', server)).to.equal(false);
    expect(await decide('tools/call', 'tool', `${tools}.get_customer`)).to.equal(true);
    expect(await decide('tools/call', 'tool', `${tools}.delete_customer`)).to.equal(false);
    expect(await decide('tools/call', 'mcp_server', server)).to.equal(false);
  });

  it('denies an email two connectors provisioned as ambiguous, unless subject.properties.connector names one', async () => {
    const shared = email('dee');
    const mine = await okta.provision({ userName: shared, externalId: uniq('o') });
    const theirs = await entra.provision({ userName: shared, externalId: uniq('e') });
    const t = await readableBy(mine);
    const answer = await ask({ type: 'user', id: shared }, t);
    expect(answer.decision).to.equal(false);
    expect(codes(answer)).to.deep.equal(['AMBIGUOUS_SUBJECT']);
    const record = await recorded(answer.context.id);
    expect(record).to.include({ decision: 'DENY', principal_id: shared });
    expect(record.reasons[0].code).to.equal('AMBIGUOUS_SUBJECT');

    for (const connector of [okta.name, okta.id, okta.name.toUpperCase()]) {
      const scoped = await ask({ type: 'user', id: shared, properties: { connector } }, t);
      expect(scoped.decision, connector).to.equal(true);
      expect((await recorded(scoped.context.id)).principal_id).to.equal(mine);
    }
    const other = await ask({ type: 'user', id: shared, properties: { connector: entra.id } }, t);
    expect(other.decision).to.equal(false);
    expect(codes(other)).to.deep.equal(['NO_MATCHING_POLICY']);
    expect((await recorded(other.context.id)).principal_id).to.equal(theirs);
    for (const connector of ['nonesuch', 'con_01JD0000000000000000000000', 42, 'Not a name']) {
      const none = await ask({ type: 'user', id: shared, properties: { connector } }, t);
      expect(codes(none), String(connector)).to.deep.equal(['PRINCIPAL_NOT_FOUND']);
    }
    // A principal id names its principal, but not from another connector than the one named.
    expect((await ask({ type: 'user', id: mine }, t)).decision).to.equal(true);
    const wrong = await ask({ type: 'user', id: mine, properties: { connector: entra.name } }, t);
    expect(codes(wrong)).to.deep.equal(['PRINCIPAL_NOT_FOUND']);
  });

  it('never lets a connector take over a subject by repeating its connector id or using its email', async () => {
    const ext = uniq('alice');
    const userName = email('alice');
    const alice = await okta.provision({ userName, externalId: ext });
    const t = await readableBy(alice);
    // The impostors are allowed too: resolving to either would be an ALLOW.
    const sameId = await entra.provision({ userName: email('imp'), externalId: ext });
    const emailAsId = await entra.provision({ userName: email('imp'), externalId: userName });
    await world.policy({
      subjects: { principals: [sameId, emailAsId] },
      resources: [{ type: t, identifier: 'x' }],
    });
    for (const id of [ext, userName]) {
      const answer = await ask({ type: 'user', id }, t);
      expect(answer.decision, id).to.equal(false);
      expect(codes(answer), id).to.deep.equal(['AMBIGUOUS_SUBJECT']);
      expect((await recorded(answer.context.id)).principal_id, id).to.equal(id);
      const scoped = await ask({ type: 'user', id, properties: { connector: okta.name } }, t);
      expect(scoped.decision, id).to.equal(true);
      expect((await recorded(scoped.context.id)).principal_id, id).to.equal(alice);
    }
    // The batch API resolves subjects the same way, item by item.
    const batch = await post(EVALUATIONS, {
      action: { name: 'read' },
      resource: { type: t, id: 'x' },
      evaluations: [
        { subject: { type: 'user', id: ext } },
        { subject: { type: 'user', id: ext, properties: { connector: okta.id } } },
        { subject: { type: 'user', id: ext, properties: { connector: entra.id } } },
      ],
    });
    expect(batch.evaluations.map((e: any) => e.decision)).to.deep.equal([false, true, true]);
    expect(codes(batch.evaluations[0])).to.deep.equal(['AMBIGUOUS_SUBJECT']);
    // Searches for an ambiguous subject find nothing, and what its connector names when scoped.
    const resources = async (subject: Record<string, unknown>) =>
      (await post(SEARCH_RESOURCE, { subject, action: { name: 'read' }, resource: { type: t } })).results;
    expect(await resources({ type: 'user', id: ext })).to.deep.equal([]);
    expect(await resources({ type: 'user', id: ext, properties: { connector: okta.name } })).to.deep.equal([
      { type: t, id: 'x' },
    ]);
    const actions = async (subject: Record<string, unknown>) =>
      (await post(SEARCH_ACTION, { subject, resource: { type: t, id: 'x' } })).results;
    expect(await actions({ type: 'user', id: userName })).to.deep.equal([]);
    expect(await actions({ type: 'user', id: userName, properties: { connector: okta.id } })).to.deep.equal([
      { name: 'read' },
    ]);
  });

  it('denies an email several users of one connector share as ambiguous', async () => {
    // The store keeps externalIds unique within a connector; emails are not.
    const shared = email('desk');
    const [e1, e2] = [uniq('e1'), uniq('e2')];
    const first = await okta.provision({ userName: email('d1'), email: shared, externalId: e1 });
    const second = await okta.provision({ userName: email('d2'), email: shared, externalId: e2 });
    const t = await readableBy(first, second);
    for (const properties of [undefined, { connector: okta.name }]) {
      const answer = await ask({ type: 'user', id: shared, ...(properties ? { properties } : {}) }, t);
      expect(answer.decision).to.equal(false);
      expect(codes(answer)).to.deep.equal(['AMBIGUOUS_SUBJECT']);
    }
    for (const id of [first, second, e1, e2])
      expect((await ask({ type: 'user', id }, t)).decision).to.equal(true);
  });

  it('lists an id two connectors share once, and keeps to the connector a search names', async () => {
    const ext = uniq('sam');
    const oktaSam = await okta.provision({ userName: email('sam'), externalId: ext });
    const entraSam = await entra.provision({ userName: email('sam'), externalId: ext });
    const t = await readableBy(oktaSam, entraSam);
    const onlyOkta = await readableBy(oktaSam);
    const search = async (rtype: string, properties?: Record<string, unknown>) =>
      (
        await post(SEARCH_SUBJECT, {
          subject: { type: 'user', ...(properties ? { properties } : {}) },
          action: { name: 'read' },
          resource: { type: rtype, id: 'x' },
        })
      ).results;
    expect(await search(t)).to.deep.equal([{ type: 'user', id: ext }]);
    expect(await search(t, { connector: entra.name })).to.deep.equal([{ type: 'user', id: ext }]);
    expect(await search(onlyOkta, { connector: okta.id })).to.deep.equal([{ type: 'user', id: ext }]);
    expect(await search(onlyOkta, { connector: entra.id })).to.deep.equal([]);
    expect(await search(onlyOkta, { connector: 'nonesuch' })).to.deep.equal([]);
  });
});
