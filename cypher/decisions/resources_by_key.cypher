// Resources as they are now; unregistered or missing ones give no row.
UNWIND $refs AS ref
MATCH (r:Resource {type: ref.type, identifier: ref.identifier})
WHERE r.registered
RETURN properties(r) AS props
