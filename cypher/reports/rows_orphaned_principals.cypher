// The next page of living non-USER principals in id order after the last one read, as one row:
// how many were read, the last id read (where the next page starts), and those among them
// without a living owner, and the AI agents among them acting for someone who is gone. The owner
// is `meta.owner`: a principal id, or else the email of a USER principal (a living one first when
// several share it). `acts_for` lists the delegations each holds at $now (active, not past
// `expires_at`), soonest to expire first; an agent holding one from a delegator who is no longer
// active, or holding any once its owner is gone, is `delegation_orphaned` (the DELEGATION_ORPHANED
// risk factor, src/risk/delegations.ts).
MATCH (p:Principal)
WHERE p.id > $after AND p.type <> 'USER' AND p.status IN ['active', 'suspended']
WITH p
ORDER BY p.id
LIMIT $limit
WITH p, p.`meta.owner` AS ref
CALL (p, ref) {
  OPTIONAL MATCH (byId:Principal {id: ref})
  WITH byId
  RETURN coalesce(byId, head(COLLECT {
    MATCH (u:Principal {email: ref})
    WHERE u.type = 'USER'
    RETURN u ORDER BY CASE u.status WHEN 'active' THEN 0 WHEN 'suspended' THEN 1 ELSE 2 END, u.id
  })) AS owner
}
WITH p, ref, owner, CASE WHEN ref IS NULL THEN 'unset' WHEN owner IS NULL THEN 'missing' ELSE owner.status END AS state
WITH p, ref, owner, state, COLLECT {
  MATCH (a:Principal)-[d:DELEGATES_TO]->(p)
  WHERE d.status = 'active' AND d.expires_at > datetime($now)
  WITH a, d
  ORDER BY d.expires_at, d.id
  RETURN {
    delegation_id: d.id, delegator_id: a.id, delegator_name: a.name, delegator_status: a.status,
    actions: d.actions, resources: d.resources, expires_at: d.expires_at
  }
} AS held
WITH p, ref, owner, state, held, p.type = 'AI_AGENT' AND (
  any(h IN held WHERE h.delegator_status <> 'active')
  OR (size(held) > 0 AND state IN ['missing', 'deprovisioned', 'deleted'])
) AS delegationOrphaned
ORDER BY p.id
WITH count(p) AS scanned, last(collect(p.id)) AS last,
  collect({p: p, ref: ref, owner: owner, state: state, held: held, orphaned: delegationOrphaned}) AS page
RETURN scanned, last, [x IN page WHERE x.state IN ['unset', 'missing', 'deprovisioned', 'deleted'] OR x.orphaned | {
  id: x.p.id, type: x.p.type, name: x.p.name, status: x.p.status, owner: x.ref,
  owner_state: x.state, owner_id: x.owner.id, owner_name: x.owner.name,
  risk_score: x.p.risk_score, created_at: x.p.created_at,
  delegation_orphaned: x.orphaned, acts_for: x.held
}] AS rows
