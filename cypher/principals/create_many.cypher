// Bulk load of principals (benchmarks and imports): the same node shape and edges as
// principals/create. Every property arrives ready in one map, timestamps as epoch milliseconds
// (cheaper to send than temporal values), the batch's distinct attribute values are merged once,
// and each link points into that list by position, so no link needs an index lookup of its own.
// A manager already in the graph is linked here; the ids of principals whose manager is not there
// yet come back for a later pass. The plan does not depend on how big the graph is, so it is
// never re-planned while a load makes the statistics move.
CYPHER replan=skip
CALL () {
  UNWIND $vocabulary AS v
  MERGE (a:Attribute {key: v.key, value: v.value})
  RETURN collect(a) AS vocabulary
}
UNWIND $rows AS row
WITH row, row.props AS props, vocabulary
CREATE (p:$(row.labels))
SET p = props {
  .*,
  created_at: datetime.fromepochmillis(row.createdAt),
  updated_at: datetime.fromepochmillis(row.createdAt),
  last_login: CASE WHEN row.lastLogin IS NOT NULL THEN datetime.fromepochmillis(row.lastLogin) END,
  card: [props.id, props.name, props.type, coalesce(props.email, '')]
}
WITH p, row, vocabulary
CALL (p, row, vocabulary) {
  UNWIND row.links AS link
  WITH p, vocabulary[link.at] AS a, link
  CREATE (p)-[:HAS_ATTRIBUTE {array: link.array}]->(a)
}
OPTIONAL MATCH (m:Principal {id: row.managerId})
FOREACH (_ IN CASE WHEN m IS NULL THEN [] ELSE [1] END | CREATE (p)-[:REPORTS_TO]->(m))
WITH collect(CASE WHEN row.managerId IS NOT NULL AND m IS NULL THEN row.id END) AS pending
RETURN pending
