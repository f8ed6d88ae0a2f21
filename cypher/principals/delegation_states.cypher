// Where the delegations AI agents hold stand (src/risk/delegations.ts): the agents named in $ids,
// the agents that principals of $ids delegate to (while those delegations are active), and the
// delegates of the delegations named in $delegations. A delegation is held while it is active and
// not past `expires_at` at $now. `state` is null when the agent holds none, `orphaned` when one
// it holds comes from a delegator who is not active (suspended, deprovisioned or deleted), else
// `acting`. Only agents whose stored state differs come back.
CALL () {
  UNWIND $ids AS id
  MATCH (p:Principal {id: id})
  RETURN p
  UNION
  UNWIND $ids AS id
  MATCH (:Principal {id: id})-[d:DELEGATES_TO]->(p:Principal)
  WHERE d.status = 'active'
  RETURN p
  UNION
  UNWIND $delegations AS id
  MATCH ()-[:DELEGATES_TO {id: id}]->(p:Principal)
  RETURN p
}
WITH DISTINCT p
WHERE p.type = 'AI_AGENT' AND p.status <> 'deleted'
CALL (p) {
  OPTIONAL MATCH (a:Principal)-[d:DELEGATES_TO]->(p)
  WHERE d.status = 'active' AND d.expires_at > datetime($now)
  RETURN count(d) AS held, count(CASE WHEN a.status <> 'active' THEN d END) AS orphaned
}
WITH p, CASE WHEN held = 0 THEN null WHEN orphaned > 0 THEN 'orphaned' ELSE 'acting' END AS state
WHERE coalesce(p.delegation_state, '') <> coalesce(state, '')
RETURN p.id AS id, state
