// Bulk registration of resources (benchmarks and imports): the node resources/lock and
// resources/register leave. Its properties become exactly row.props (type, identifier, owner_id
// and attributes as `attr.<key>`), a node a policy already named keeps its created_at, it takes
// the Registered label, and an OWNED_BY edge goes to its owner when that principal exists.
UNWIND $rows AS row
MERGE (r:Resource {type: row.props.type, identifier: row.props.identifier})
  ON CREATE SET r.created_at = datetime(row.createdAt)
WITH r, row, r.created_at AS created
SET r = row.props
SET r.created_at = created, r.updated_at = datetime(row.createdAt), r.registered = true, r:Registered
WITH r, row
CALL (r, row) {
  MATCH (p:Principal {id: row.props.owner_id})
  MERGE (r)-[:OWNED_BY]->(p)
}
RETURN count(r) AS registered
