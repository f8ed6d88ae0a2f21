// Forgets access changes older than the retention, a slice of parts at a time, and the causes
// left with no part.
MATCH (p:AccessChangePart)
WHERE p.at_last < datetime($before)
WITH p
LIMIT $limit
OPTIONAL MATCH (p)-[:CAUSED_BY]->(k:AccessCause)
WITH k, collect(p) AS parts
WITH k, size(parts) AS deleted, reduce(n = 0, x IN parts | n + x.count) AS changes, parts
FOREACH (x IN parts | DETACH DELETE x)
WITH k, deleted, changes
CALL (k) {
  WITH k
  WHERE k IS NOT NULL AND NOT EXISTS { (k)<-[:CAUSED_BY]-(:AccessChangePart) }
  DELETE k
}
RETURN sum(deleted) AS parts, sum(changes) AS purged
