// Delegations by id, with both principals' statuses.
UNWIND $ids AS id
MATCH (a:Principal)-[d:DELEGATES_TO {id: id}]->(b:Principal)
RETURN d {.*, delegator_id: a.id, delegate_id: b.id, delegator_status: a.status, delegate_status: b.status} AS props
