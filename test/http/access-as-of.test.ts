import { expect } from 'chai';
import { engineApi, namer } from '../helpers/engine.js';
import { useApp } from '../helpers/fixture.js';
import type { HttpClient } from '../helpers/http.js';

/**
 * `as_of` (docs/api.md §11): the live answers of GET /v1/principals/{id}/access,
 * GET /v1/resources/access and POST /v1/decisions/evaluate are recorded after each of a sequence
 * of changes; asked later with `as_of` each of those instants, the service answers what was live
 * then. Every answer is checked against the OpenAPI document.
 */
describe('access as of an instant', () => {
  let api: HttpClient;
  const { uniq, type } = namer();
  let world: ReturnType<typeof engineApi>;

  const fx = useApp();
  before(() => {
    api = fx.api;
    world = engineApi(api, uniq);
  });

  const ok = async (res: Promise<any>): Promise<any> => {
    const r = await res;
    expect(r.status, r.text).to.be.within(200, 204);
    return r.body;
  };

  /** An instant after everything so far, and a millisecond before anything that follows. */
  const instant = (): string => {
    const at = Date.now();
    while (Date.now() <= at) {
      // The next change must be stamped at a later millisecond than the instant.
    }
    return new Date(at).toISOString();
  };

  /** What a principal's access says, without the dates (which `as_of` tells differently). */
  const accessOf = (body: any) =>
    body.access.map((e: any) => ({
      resource: e.resource,
      pattern: e.pattern ?? false,
      actions: e.actions,
      denied: e.denied_actions ?? [],
      granted_by: [...e.granted_by].sort(),
      conditional: e.conditional,
    }));
  const holdersOf = (body: any) =>
    body.principals.map((p: any) => ({
      id: p.principal.id,
      actions: p.actions,
      granted_by: [...p.granted_by].sort(),
    }));

  it('answers what the live endpoints answered at each instant of a sequence of changes', async () => {
    const t = type();
    const ada = (await world.principal('SERVICE_ACCOUNT', { team: 'eng' })).id as string;
    const bob = (await world.principal('SERVICE_ACCOUNT', { team: 'ops' })).id as string;
    const eng = await world.group();
    const all = await world.group();
    await world.register(t, 'doc-1');
    const people = [ada, bob];
    const resources = ['doc-1', 'doc-2', 'other'];
    const requests = people.flatMap((p) =>
      resources.flatMap((r) =>
        ['read', 'write'].map((action) => ({
          principal_id: p,
          action,
          resource: { type: t, identifier: r },
        })),
      ),
    );

    let version = 0;
    let policy = '';
    const steps: (() => Promise<unknown>)[] = [
      () => world.addMember(eng, ada),
      async () => {
        const created = await world.policy({
          subjects: { groups: [eng] },
          actions: ['read', 'write'],
          resources: [{ type: t, identifier: 'doc-*' }],
        });
        policy = created.id;
        version = created.version;
      },
      () => world.policy({ subjects: { principals: [bob] }, resources: [{ type: t, identifier: 'other' }] }),
      () => world.addMember(all, eng),
      () => world.addMember(eng, bob),
      () => world.register(t, 'doc-2'),
      () =>
        ok(
          api.put(
            `/v1/policies/${policy}`,
            {
              name: uniq('narrowed'),
              effect: 'allow',
              subjects: { groups: [eng] },
              actions: ['read'],
              resources: [{ type: t, identifier: 'doc-*' }],
            },
            { headers: { 'If-Match': `"${version}"` } },
          ),
        ),
      () => ok(api.delete(`/v1/groups/${eng}/members/${ada}`)),
      () => ok(api.patch(`/v1/principals/${bob}`, { status: 'suspended' })),
      () => ok(api.delete(`/v1/resources/${t}/doc-1`)),
    ];

    const live: { at: string; principals: unknown[]; resources: unknown[]; decisions: string[] }[] = [];
    const snapshot = async (): Promise<void> => {
      const principals = [];
      for (const p of people) principals.push(accessOf(await ok(api.get(`/v1/principals/${p}/access`))));
      const held = [];
      for (const r of resources)
        held.push(holdersOf(await ok(api.get(`/v1/resources/access?type=${t}&identifier=${r}&limit=100`))));
      const decisions = [];
      for (const request of requests)
        decisions.push((await ok(api.post('/v1/decisions/evaluate', request))).decision);
      live.push({ at: instant(), principals, resources: held, decisions });
    };
    await snapshot();
    for (const step of steps) {
      await step();
      await snapshot();
    }

    for (const [n, then] of live.entries()) {
      const asOf = encodeURIComponent(then.at);
      for (const [i, p] of people.entries()) {
        const past = await ok(api.get(`/v1/principals/${p}/access?as_of=${asOf}`));
        expect(past.as_of, `step ${n}`).to.equal(then.at);
        expect(accessOf(past), `step ${n}: ${p}`).to.deep.equal(then.principals[i]);
      }
      for (const [i, r] of resources.entries()) {
        const past = await ok(
          api.get(`/v1/resources/access?type=${t}&identifier=${r}&limit=100&as_of=${asOf}`),
        );
        expect(holdersOf(past), `step ${n}: who could reach ${r}`).to.deep.equal(then.resources[i]);
      }
      const decisions = [];
      for (const request of requests) {
        const past = await ok(api.post('/v1/decisions/evaluate', { ...request, as_of: then.at }));
        expect(past.as_of).to.equal(then.at);
        decisions.push(past.decision);
      }
      expect(decisions, `step ${n}: decisions`).to.deep.equal(then.decisions);
    }
  });

  it('names who could reach a resource then as it was named then, once deleted since', async () => {
    const t = type();
    const gone = (await world.principal('AI_AGENT')).id as string;
    const stays = (await world.principal('SERVICE_ACCOUNT')).id as string;
    await world.policy({
      subjects: { principals: [gone, stays] },
      resources: [{ type: t, identifier: 'x' }],
    });
    const then = await ok(api.get(`/v1/resources/access?type=${t}&identifier=x&limit=100`));
    expect(then.principals.map((p: any) => p.principal.id)).to.have.members([gone, stays]);
    const at = encodeURIComponent(instant());
    expect((await api.delete(`/v1/principals/${gone}`)).status).to.equal(200);
    expect(
      (await ok(api.get(`/v1/resources/access?type=${t}&identifier=x&limit=100`))).principals,
    ).to.have.length(1);
    const past = await ok(api.get(`/v1/resources/access?type=${t}&identifier=x&limit=100&as_of=${at}`));
    expect(past.principals).to.deep.equal(then.principals);
  });

  it('dates each grant with the change that made it true', async () => {
    const t = type();
    const p = (await world.principal()).id as string;
    const g = await world.group();
    const policy = await world.policy({
      subjects: { groups: [g] },
      resources: [{ type: t, identifier: 'x' }],
    });
    await world.addMember(g, p);
    const at = instant();
    const added = (await ok(api.get(`/v1/audit/events?type=group.member_added&target_id=${g}`))).data[0];
    const past = await ok(api.get(`/v1/principals/${p}/access?as_of=${encodeURIComponent(at)}&explain=true`));
    expect(past.access).to.have.length(1);
    expect(past.access[0]).to.deep.include({
      granted_by: [policy.id],
      granted_at: added.occurred_at,
      granted_by_event: { event_id: added.id, event_type: 'group.member_added', actor: added.actor },
    });
    expect(past.access[0].grants[0]).to.include({ policy_id: policy.id, via: 'group' });
  });

  it('refuses an instant outside the history, or with what it cannot answer, with 400', async () => {
    const p = (await world.principal()).id as string;
    const old = await api.get(`/v1/principals/${p}/access?as_of=2001-01-01T00:00:00Z`);
    expect(old.status).to.equal(400);
    expect(old.body.code).to.equal('VALIDATION_FAILED');
    expect(old.body.errors[0].pointer).to.equal('/query/as_of');
    expect(old.body.errors[0].message).to.match(/known from \d{4}-\d\d-\d\dT/);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await api.get(`/v1/resources/access?type=doc&identifier=x&as_of=${future}`)).status).to.equal(
      400,
    );
    expect((await api.get(`/v1/principals/${p}/access?as_of=yesterday`)).status).to.equal(400);
    const now = instant();
    const chained = await api.get(
      `/v1/principals/${p}/access?as_of=${encodeURIComponent(now)}&on_behalf_of=${p}`,
    );
    expect(chained.status).to.equal(400);
    expect(chained.body.errors[0].pointer).to.equal('/query/on_behalf_of');
    const explained = await api.post('/v1/decisions/evaluate', {
      principal_id: p,
      action: 'read',
      resource: { type: 'doc', identifier: 'x' },
      explain: true,
      as_of: now,
    });
    expect(explained.status).to.equal(400);
    expect(explained.body.errors[0].pointer).to.equal('/body/explain');
    // A decision as of an instant is not recorded.
    const decided = await ok(
      api.post('/v1/decisions/evaluate', {
        principal_id: p,
        action: 'read',
        resource: { type: 'doc', identifier: 'x' },
        as_of: now,
      }),
    );
    expect(decided.as_of).to.equal(now);
    expect((await api.get(`/v1/decisions/${decided.id}`)).status).to.equal(404);
  });
});
