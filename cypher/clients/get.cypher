MATCH (c:Client {id: $id})
RETURN c {.id, .name, .scopes, .status, .created_at, .created_by, .deleted_at, .deleted_by} AS client
