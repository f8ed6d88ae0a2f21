import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { projectRoot } from '../../src/paths.js';
import type { Principal } from '../../src/principals/model.js';
import type { TestApp } from '../helpers/app.js';
import { useApp } from '../helpers/fixture.js';
import { cypher } from '../helpers/db.js';
import type { HttpClient } from '../helpers/http.js';
import { insertPrincipal } from '../helpers/principals.js';

/** The page that holds the queries to paste into Neo4j Browser, and their section. */
const PAGE = 'docs/graph-model.md';
const SECTION = 'Explore the graph';

/** The Cypher blocks of one section of the page, in the order they appear. */
function pageQueries(heading: string): string[] {
  const page = readFileSync(path.join(projectRoot(), PAGE), 'utf8');
  const start = page.indexOf(`\n## ${heading}\n`);
  if (start === -1) throw new Error(`${PAGE} has no "## ${heading}" section`);
  const rest = page.slice(start + 1);
  const end = rest.search(/\n##? /);
  const section = end === -1 ? rest : rest.slice(0, end);
  return [...section.matchAll(/```cypher\n([\s\S]*?)```/g)].map((m) => m[1]!.trim());
}

/**
 * The example graph the queries are written for:
 *   Alan Turing ← Grace Hopper ← {Ada Lovelace, Edsger Dijkstra}   (REPORTS_TO)
 *   Engineering ← {Platform ← SRE, Data}; Finance apart             (groups nested by MEMBER_OF)
 *   Ada in SRE, Edsger in Data, Grace in Engineering, invoice-triage in Platform, Alan in Finance
 *   AI agents: invoice-triage (owner: Ada's id), release-notes (owner: Grace's email),
 *   stray-bot (no owner); the service account ci-deploy has an owner but is no agent.
 *   Delegations: Ada → invoice-triage → release-notes, Grace → release-notes (reading tickets),
 *   Alan → ci-deploy revoked.
 */
describe('docs/graph-model.md: Explore the graph', function () {
  // A dozen writes through the service before the first query; a busy machine needs a while.
  this.timeout(60_000);
  let app: TestApp;
  let api: HttpClient;
  const p: Record<string, Principal> = {};

  const fx = useApp();

  before(async () => {
    app = fx.app;
    api = fx.api;
    p['alan'] = await insertPrincipal(app, { name: 'Alan Turing' });
    p['grace'] = await insertPrincipal(app, {
      name: 'Grace Hopper',
      attributes: { manager_id: p['alan'].id },
    });
    p['ada'] = await insertPrincipal(app, {
      name: 'Ada Lovelace',
      attributes: { manager_id: p['grace'].id },
    });
    p['edsger'] = await insertPrincipal(app, {
      name: 'Edsger Dijkstra',
      attributes: { manager_id: p['grace'].id },
    });
    const agent = (name: string, owner?: string): Promise<Principal> =>
      insertPrincipal(app, {
        type: 'AI_AGENT',
        name,
        attributes: { capabilities: ['read_tickets'], allowed_tools: ['search'] },
        metadata: owner === undefined ? {} : { owner },
      });
    p['triage'] = await agent('invoice-triage', p['ada'].id);
    p['notes'] = await agent('release-notes', p['grace'].email!);
    p['stray'] = await agent('stray-bot');
    p['deploy'] = await insertPrincipal(app, {
      type: 'SERVICE_ACCOUNT',
      name: 'ci-deploy',
      metadata: { owner: p['alan'].id },
    });

    const group = async (name: string): Promise<string> => {
      const res = await api.post('/v1/groups', { name });
      expect(res.status, res.text).to.equal(201);
      return res.body.id as string;
    };
    const g: Record<string, string> = {};
    for (const name of ['Engineering', 'Platform', 'SRE', 'Data', 'Finance']) g[name] = await group(name);
    const add = async (groupId: string, memberId: string): Promise<void> => {
      const res = await api.put(`/v1/groups/${groupId}/members/${memberId}`);
      expect(res.status, res.text).to.be.oneOf([200, 201]);
    };
    await add(g['Engineering']!, g['Platform']!);
    await add(g['Platform']!, g['SRE']!);
    await add(g['Engineering']!, g['Data']!);
    await add(g['SRE']!, p['ada'].id);
    await add(g['Data']!, p['edsger'].id);
    await add(g['Engineering']!, p['grace'].id);
    await add(g['Platform']!, p['triage'].id);
    await add(g['Finance']!, p['alan'].id);
    const policy = async (body: Record<string, unknown>): Promise<void> => {
      const res = await api.post('/v1/policies', body);
      expect(res.status, res.text).to.equal(201);
    };
    await policy({
      name: 'engineering-read-ledger',
      effect: 'allow',
      subjects: { groups: [g['Engineering']!] },
      actions: ['read'],
      resources: [
        { type: 'database', identifier: 'ledger' },
        { type: 'database', identifier: 'payments-*' },
      ],
    });
    const delegate = async (
      from: string,
      to: string,
      extra: Record<string, unknown> = {},
    ): Promise<string> => {
      const res = await api.post('/v1/delegations', {
        delegator_id: from,
        delegate_id: to,
        expires_at: new Date(Date.now() + 86_400_000).toISOString(),
        ...extra,
      });
      expect(res.status, res.text).to.equal(201);
      return res.body.id as string;
    };
    await delegate(p['ada'].id, p['triage'].id);
    await delegate(p['triage'].id, p['notes'].id);
    await delegate(p['grace'].id, p['notes'].id, {
      actions: ['read'],
      resources: [{ type: 'ticket', identifier: '*' }],
    });
    const revoked = await delegate(p['alan'].id, p['deploy'].id);
    expect((await api.delete(`/v1/delegations/${revoked}`)).status).to.equal(200);
    await policy({
      name: 'ada-write-ledger',
      effect: 'allow',
      subjects: { principals: [p['ada'].id] },
      actions: ['write'],
      resources: [{ type: 'database', identifier: 'ledger' }],
    });
  });

  /** In page order; `about` names what the query is for, so a reordered page fails clearly. */
  const expected: { about: string; rows: () => Record<string, unknown>[] }[] = [
    {
      about: 'REPORTS_TO',
      rows: () => [
        { steps: 1, manager: 'Grace Hopper', type: 'USER', status: 'active' },
        { steps: 2, manager: 'Alan Turing', type: 'USER', status: 'active' },
      ],
    },
    {
      about: '(sub:Group)-[:MEMBER_OF',
      rows: () => [
        { group: 'Data', depth: 1, path: ['Engineering', 'Data'] },
        { group: 'Platform', depth: 1, path: ['Engineering', 'Platform'] },
        { group: 'SRE', depth: 2, path: ['Engineering', 'Platform', 'SRE'] },
      ],
    },
    {
      about: '(p:Principal)-[:MEMBER_OF',
      rows: () => [
        { member: 'Ada Lovelace', type: 'USER' },
        { member: 'Edsger Dijkstra', type: 'USER' },
        { member: 'Grace Hopper', type: 'USER' },
        { member: 'invoice-triage', type: 'AI_AGENT' },
      ],
    },
    {
      about: 'meta.owner',
      rows: () => [
        { agent: 'invoice-triage', owner_ref: p['ada']!.id, owner: 'Ada Lovelace', owner_status: 'active' },
        {
          agent: 'release-notes',
          owner_ref: p['grace']!.email,
          owner: 'Grace Hopper',
          owner_status: 'active',
        },
        { agent: 'stray-bot', owner_ref: null, owner: null, owner_status: null },
      ],
    },
    {
      about: '<-[:APPLIES_TO]-(policy:Policy)',
      rows: () => [
        {
          policy: 'ada-write-ledger',
          effect: 'allow',
          actions: ['write'],
          resources: ['database:ledger'],
          through: 'Ada Lovelace',
        },
        {
          policy: 'engineering-read-ledger',
          effect: 'allow',
          actions: ['read'],
          resources: ['database:ledger', 'database:payments-*'],
          through: 'Engineering',
        },
      ],
    },
    {
      about: "(policy:Policy {name: 'engineering-read-ledger'})",
      rows: () => [
        { member: 'Ada Lovelace', type: 'USER' },
        { member: 'Edsger Dijkstra', type: 'USER' },
        { member: 'Grace Hopper', type: 'USER' },
        { member: 'invoice-triage', type: 'AI_AGENT' },
      ],
    },
    {
      about: "DELEGATES_TO {status: 'active'}",
      rows: () => [
        { delegator: 'Ada Lovelace', delegate: 'invoice-triage', actions: ['*'], resources: null },
        { delegator: 'Grace Hopper', delegate: 'release-notes', actions: ['read'], resources: ['ticket:*'] },
        { delegator: 'invoice-triage', delegate: 'release-notes', actions: ['*'], resources: null },
      ],
    },
    {
      about: 'DELEGATES_TO*1..4',
      rows: () => [
        { agent: 'invoice-triage', links: 1, chain: ['Ada Lovelace', 'invoice-triage'] },
        { agent: 'release-notes', links: 2, chain: ['Ada Lovelace', 'invoice-triage', 'release-notes'] },
      ],
    },
  ];

  it('has the queries this test knows the answers to', () => {
    const queries = pageQueries(SECTION);
    expect(queries).to.have.length(expected.length);
    queries.forEach((query, i) => expect(query, `query ${i + 1}`).to.contain(expected[i]!.about));
  });

  expected.forEach(({ about }, i) => {
    it(`query ${i + 1} (${about}) returns the expected rows`, async () => {
      const query = pageQueries(SECTION)[i];
      expect(query, `${PAGE} query ${i + 1}`).to.be.a('string');
      expect(await cypher(app.runtime.db, query!)).to.deep.equal(expected[i]!.rows());
    });
  });
});
