// Every delegation that may still apply, for the decision index.
MATCH (a:Principal)-[d:DELEGATES_TO]->(b:Principal)
WHERE d.status = 'active'
RETURN d.id AS id, a.id AS delegator_id, b.id AS delegate_id, d.actions AS actions,
       d.resources AS resources, toString(d.expires_at) AS expires_at, d.status AS status
