// The versions of a policy, newest first; no row when the policy does not exist.
MATCH (pol:Policy {id: $id})
CALL (pol) {
  MATCH (pol)-[:HAS_VERSION]->(v:PolicyVersion)
  RETURN count(v) AS total
}
CALL (pol) {
  MATCH (pol)-[:HAS_VERSION]->(v:PolicyVersion)
  WITH v
  ORDER BY v.version DESC
  SKIP $skip
  LIMIT $limit
  RETURN collect(properties(v)) AS versions
}
RETURN total, versions
