// Who had access to a resource change since an instant: the principals with a change recorded
// after it on the resource itself or on a glob of its type (which the caller matches).
MATCH (c:AccessChange)
WHERE c.resource_type = $type AND (c.identifier = $identifier OR c.pattern) AND c.at > datetime($at)
RETURN DISTINCT c.principal_id AS id, c.principal_name AS name, c.principal_type AS type,
       c.identifier AS identifier, c.pattern AS pattern
