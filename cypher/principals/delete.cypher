// Soft delete: the node stays (audit trails keep resolving) but leaves every group and loses
// its manager and report edges, and with them its card: it is nobody's relation any more.
MATCH (p:Principal {id: $id})
SET p.status = 'deleted', p.deleted_at = datetime($now), p.deleted_by = $deletedBy,
    p.updated_at = datetime($now), p.version = p.version + 1
REMOVE p:Active:Suspended:Deprovisioned, p.card
SET p:Deleted
WITH p
CALL (p) {
  OPTIONAL MATCH (p)-[r:MEMBER_OF]->(g:Group)
  DELETE r
  RETURN collect(g.id) AS groups
}
CALL (p) {
  MATCH (p)-[r:REPORTS_TO]-(:Principal)
  DELETE r
}
RETURN properties(p) AS props, groups
