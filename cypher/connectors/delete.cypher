// Soft delete: the node stays so audit trails and connector_source resolve; its token and name
// are given up. Its principals and groups stay, scoped by its id (connector_ref): a new connector
// of the same name sees none of them.
MATCH (c:Connector {id: $id})
SET c.status = 'deleted', c.deleted_at = datetime(), c.deleted_by = $deletedBy
REMOVE c.name_key, c.token_hash
RETURN c {.id, .status, .deleted_at, .deleted_by} AS connector
