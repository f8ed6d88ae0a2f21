// Soft delete: the node stays so audit trails resolve; every token of the client is revoked.
MATCH (c:Client {id: $id})
SET c.status = 'deleted', c.deleted_at = datetime(), c.deleted_by = $deletedBy
REMOVE c.name_key
WITH c
CALL (c) {
  OPTIONAL MATCH (c)-[:HAS_TOKEN_FAMILY]->(f:TokenFamily)
  WHERE f.status = 'active'
  SET f.status = 'revoked', f.revoked_at = datetime(), f.revoked_reason = 'client_deleted'
  WITH f
  OPTIONAL MATCH (f)-[:ISSUED]->(t)
  WHERE t.status <> 'revoked'
  SET t.status = 'revoked', t.revoked_at = datetime()
  RETURN count(t) AS revoked
}
RETURN c {.id, .status, .deleted_at, .deleted_by} AS client, revoked
