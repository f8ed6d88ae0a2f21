// Bulk load of policies (benchmarks and imports): the same nodes and edges as policies/create
// followed by policies/relink. Each row holds the node properties of src/policies/repository.ts
// (`props`), its window (`window`), the resources named exactly (`exact`) and the body its first
// version records.
// APPLIES_TO goes to each subject principal and group that exists; ALLOWS or DENIES (by effect)
// to each exact resource, whose (:Resource) node is created unregistered when new. Rows naming
// the same new resource must come in one transaction or one after another, never concurrently.
UNWIND $rows AS row
CREATE (pol:Policy {id: row.id})
SET pol += row.props,
    pol.valid_from = datetime(row.window.valid_from),
    pol.valid_until = datetime(row.window.valid_until),
    pol.version = 1,
    pol.activated_at = CASE WHEN row.props.status = 'active' THEN datetime(row.createdAt) END,
    pol.created_at = datetime(row.createdAt),
    pol.created_by = $actor,
    pol.updated_at = datetime(row.createdAt),
    pol.updated_by = $actor
CREATE (pol)-[:HAS_VERSION]->(:PolicyVersion {
  policy_id: row.id,
  version: 1,
  body: row.body,
  status: row.props.status,
  created_at: datetime(row.createdAt),
  created_by: $actor
})
WITH pol, row
CALL (pol, row) {
  UNWIND row.props.subject_principals AS pid
  MATCH (p:Principal {id: pid})
  CREATE (pol)-[:APPLIES_TO {since: datetime(row.createdAt)}]->(p)
}
CALL (pol, row) {
  UNWIND row.props.subject_groups AS gid
  MATCH (g:Group {id: gid})
  CREATE (pol)-[:APPLIES_TO {since: datetime(row.createdAt)}]->(g)
}
CALL (pol, row) {
  UNWIND row.exact AS ref
  MERGE (r:Resource {type: ref.type, identifier: ref.identifier})
    ON CREATE SET r.registered = false, r.created_at = datetime(row.createdAt), r.updated_at = datetime(row.createdAt)
  CREATE (pol)-[:$(CASE WHEN pol.effect = 'allow' THEN 'ALLOWS' ELSE 'DENIES' END) {actions: pol.actions}]->(r)
}
RETURN count(pol) AS created
