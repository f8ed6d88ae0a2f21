// Marks expired the active delegations whose time is up, a bounded batch at a time, oldest first.
MATCH (a:Principal)-[d:DELEGATES_TO]->(b:Principal)
WHERE d.status = 'active' AND d.expires_at <= datetime($now)
WITH a, d, b
ORDER BY d.expires_at
LIMIT $limit
SET d.status = 'expired', d.expired_at = datetime($now)
RETURN d {.*, delegator_id: a.id, delegate_id: b.id, delegator_status: a.status, delegate_status: b.status} AS props
