// For the principals of $ids, the delegations each holds at $now (active, not past `expires_at`):
// whom it acts for, with what, until when; soonest to expire first. Only AI agents and service
// accounts ever hold one; the others come back with none.
UNWIND $ids AS id
MATCH (a:Principal)-[d:DELEGATES_TO]->(p:Principal {id: id})
WHERE d.status = 'active' AND d.expires_at > datetime($now)
WITH p, a, d
ORDER BY d.expires_at, d.id
RETURN p.id AS id, collect({
  delegation_id: d.id, delegator_id: a.id, delegator_name: a.name, delegator_status: a.status,
  actions: d.actions, resources: d.resources, expires_at: d.expires_at
}) AS held
