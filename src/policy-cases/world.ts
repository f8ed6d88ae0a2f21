import type { AccessRequest } from '../decisions/engine.js';
import { compilePolicy, toIxPrincipal, type IxPrincipal } from '../decisions/model.js';
import { PolicyIndex } from '../decisions/policy-index.js';
import { bodyFields, checkPolicyBody, resourceOf, type Policy, type PolicyBody } from '../policies/model.js';
import type { EngineCase, PolicySpec, World } from './format.js';

/**
 * The decision index a world of policy cases stands for, built in memory without Neo4j, and the
 * request each case makes of it: what the engine's tests, `npm run bench:decisions` and
 * `pas policies test` decide the cases on.
 */

const DAY = 86_400_000;

/** A policy as the store holds it, checked as the API checked it when it was written. */
export function storedPolicy(spec: PolicySpec, now: number): Policy {
  const at = '2026-01-01T00:00:00.000Z';
  // Written a month ago: a window that has closed since was still ahead then.
  const writtenAt = now - 30 * DAY;
  const body: PolicyBody = checkPolicyBody(
    {
      name: spec.id,
      effect: spec.effect,
      subjects: {
        ...(spec.principals?.length ? { principals: spec.principals } : {}),
        ...(spec.groups?.length ? { groups: spec.groups } : {}),
        ...(spec.match ? { match: spec.match } : {}),
      },
      actions: spec.actions ?? ['read'],
      resources: spec.resources.map(resourceOf),
      ...(spec.conditions ? { conditions: spec.conditions } : {}),
      status: spec.status ?? 'active',
      ...(spec.valid_from ? { valid_from: spec.valid_from } : {}),
      ...(spec.valid_until ? { valid_until: spec.valid_until } : {}),
    },
    '',
    writtenAt,
  );
  const fields = bodyFields(body);
  return {
    id: spec.id,
    ...fields,
    version: spec.version ?? 1,
    activated_at: fields.status === 'active' ? at : null,
    created_at: at,
    created_by: 'cli_test',
    updated_at: at,
    updated_by: 'cli_test',
  };
}

/** A principal of a world as the index holds it. */
export function ixPrincipalOf(p: World['principals'][number]): IxPrincipal {
  const at = '2025-06-01T00:00:00Z';
  return toIxPrincipal({
    id: p.id,
    type: p.type,
    status: p.status ?? 'active',
    name: p.name,
    email: p.type === 'USER' ? `${p.name.toLowerCase()}@example.com` : null,
    connector_source: p.type === 'USER' ? 'okta' : null,
    connector_id: p.type === 'USER' ? `okta-${p.id}` : null,
    created_at: at,
    updated_at: at,
    last_login: null,
    risk_score: p.risk_score ?? 0,
    privileges: null,
    fields: Object.entries(p.attributes ?? {}).map(([k, v]) => [`attr.${k}`, v]),
    groups: p.groups ?? [],
  });
}

/**
 * The index a world stands for. Every policy is checked as the API checks it at write time
 * (`checkPolicyBody`), so no case rests on a policy the service would refuse; delegations last a
 * day from `now`.
 */
export function buildIndex(world: World, now = Date.now()): PolicyIndex {
  const index = new PolicyIndex();
  for (const g of world.groups) index.putGroup(g.id, g.id, g.parents ?? []);
  for (const p of world.principals) index.putPrincipal(p.id, ixPrincipalOf(p));
  for (const r of world.resources) {
    const { type, identifier } = resourceOf(r.resource);
    index.putResource(type, identifier, { type, identifier, attributes: r.attributes });
  }
  for (const spec of world.policies) index.putPolicy(compilePolicy(storedPolicy(spec, now)));
  for (const { delegator, delegate } of world.delegations) {
    const id = `dlg_${delegator}_${delegate}`;
    index.putDelegation(id, {
      id,
      delegatorId: delegator,
      delegateId: delegate,
      actions: ['*'],
      resources: null,
      expiresAt: now + DAY,
    });
  }
  return index;
}

/** The request a case makes. */
export function requestOf(c: EngineCase): AccessRequest {
  const { type, identifier } = resourceOf(c.resource);
  return {
    principal_id: c.principal,
    action: c.action ?? 'read',
    resource: { type, identifier, ...(c.attributes ? { attributes: c.attributes } : {}) },
    ...(c.context ? { context: c.context } : {}),
    ...(c.subject_properties ? { subject_properties: c.subject_properties } : {}),
    ...(c.on_behalf_of !== undefined ? { on_behalf_of: c.on_behalf_of } : {}),
  };
}
