// Delegations by id, for the decision index to read again after a change.
UNWIND $ids AS id
MATCH (a:Principal)-[d:DELEGATES_TO {id: id}]->(b:Principal)
RETURN d.id AS id, a.id AS delegator_id, b.id AS delegate_id, d.actions AS actions,
       d.resources AS resources, toString(d.expires_at) AS expires_at, d.status AS status
