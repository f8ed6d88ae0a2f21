// Manager links as a snapshot has them: each row's user reports to managerId (or to nobody),
// and waits on ref when its manager is not among the connector's users.
UNWIND $rows AS row
MATCH (p:Principal {id: row.id})
CALL (p) {
  MATCH (p)-[r:REPORTS_TO]->()
  DELETE r
}
CALL (p, row) {
  MATCH (m:Principal {id: row.managerId})
  CREATE (p)-[:REPORTS_TO]->(m)
}
SET p.`attr.manager_id` = row.managerId, p.manager_ref = row.ref,
  p.version = p.version + 1, p.updated_at = datetime($now)
