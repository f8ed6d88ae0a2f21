// A page of the non-USER principals in id order after $after: every one whose owner is checked
// when an instance starts.
MATCH (p:Principal)
WHERE p.id > $after AND p.type <> 'USER' AND p.status <> 'deleted'
RETURN p.id AS id
ORDER BY id
LIMIT $limit
