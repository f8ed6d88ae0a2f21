// A delegation: an edge from the principal who delegates to the one who acts for it. Its
// resources are `type:identifier` texts (a glob allowed), null for every resource.
MATCH (a:Principal {id: $delegatorId}), (b:Principal {id: $delegateId})
CREATE (a)-[d:DELEGATES_TO]->(b)
SET d = $props, d.expires_at = datetime($expiresAt), d.created_at = datetime($now)
RETURN d {.*, delegator_id: a.id, delegate_id: b.id, delegator_status: a.status, delegate_status: b.status} AS props
