// A page of the living AI agents in id order after $after that hold a delegation of any status,
// or still carry a delegation state: every one whose delegations are checked when an instance
// starts (an agent that never held one has nothing to check).
MATCH (p:Principal)
WHERE p.id > $after AND p.type = 'AI_AGENT' AND p.status <> 'deleted'
  AND (p.delegation_state IS NOT NULL OR EXISTS { (p)<-[:DELEGATES_TO]-(:Principal) })
RETURN p.id AS id
ORDER BY id
LIMIT $limit
