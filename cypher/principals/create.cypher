CREATE (p:Principal {
  id: $id,
  type: $type,
  name: $name,
  status: $status,
  created_at: datetime($now),
  created_by: $createdBy,
  updated_at: datetime($now),
  last_login: CASE WHEN $lastLogin IS NULL THEN null ELSE datetime($lastLogin) END,
  version: 1,
  risk_score: $riskScore,
  risk_factors: $riskFactors
})
SET p:$($labels)
SET p += $props
SET p.card = [p.id, p.name, p.type, coalesce(p.email, '')]
WITH p
CALL (p) {
  UNWIND $entries AS entry
  MERGE (a:Attribute {key: entry.key, value: entry.value})
  CREATE (p)-[:HAS_ATTRIBUTE {array: entry.array}]->(a)
}
CALL (p) {
  MATCH (m:Principal {id: $managerId})
  CREATE (p)-[:REPORTS_TO]->(m)
}
RETURN properties(p) AS props
