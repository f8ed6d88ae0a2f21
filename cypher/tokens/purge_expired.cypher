// Removes tokens that expired more than a day ago, then families left without any token.
CALL () {
  MATCH (t:AccessToken) WHERE t.expires_at < datetime() - duration('P1D') RETURN t
  UNION
  MATCH (t:RefreshToken) WHERE t.expires_at < datetime() - duration('P1D') RETURN t
}
WITH t LIMIT $batch
DETACH DELETE t
WITH count(*) AS removed
CALL (removed) {
  MATCH (f:TokenFamily)
  WHERE NOT EXISTS { (f)-[:ISSUED]->() }
  WITH f LIMIT $batch
  DETACH DELETE f
  RETURN count(*) AS families
}
RETURN removed + families AS removed
