// Who had access to a resource change since an instant: for each principal with a change recorded
// after it on the resource itself or on a glob of its type (which the caller matches), per entry,
// the first such change, whose `before` is what held at the instant (access while acting for
// another left out).
MATCH (c:AccessChange)
WHERE c.resource_type = $type AND c.identifier IS NOT NULL
  AND (c.identifier = $identifier OR c.pattern) AND c.at > datetime($at)
  AND c.on_behalf_of_id IS NULL
WITH c
ORDER BY c.id
WITH c.principal_id AS id, c.identifier AS identifier, c.pattern AS pattern, collect(c)[0] AS first
RETURN id, first.principal_name AS name, first.principal_type AS type, identifier, pattern,
       first.before AS before
