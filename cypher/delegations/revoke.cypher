// Revokes an active delegation; answers nothing when it is not active (already revoked or expired).
MATCH (a:Principal)-[d:DELEGATES_TO {id: $id}]->(b:Principal)
WHERE d.status = 'active'
SET d.status = 'revoked', d.revoked_at = datetime($now), d.revoked_by = $revokedBy
RETURN d {.*, delegator_id: a.id, delegate_id: b.id, delegator_status: a.status, delegate_status: b.status} AS props
