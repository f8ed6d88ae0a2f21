MATCH (c:Client)
WHERE c.status IN $statuses
WITH c
ORDER BY c.created_at DESC, c.id DESC
SKIP $skip
LIMIT $limit
RETURN c {.id, .name, .scopes, .status, .created_at, .created_by, .deleted_at, .deleted_by} AS client
