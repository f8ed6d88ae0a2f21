// $set holds changed properties (null removes one); $changedKeys the attribute keys whose
// value nodes must be relinked to $entries. The status label follows the status property, the
// card (principals/relationships) the name and email.
MATCH (p:Principal {id: $id})
SET p += $set
REMOVE p:$($fromStatusLabel)
SET p:$($toStatusLabel)
SET p.updated_at = datetime($now), p.version = p.version + 1, p.risk_score = $riskScore, p.risk_factors = $riskFactors
SET p.card = [p.id, p.name, p.type, coalesce(p.email, '')]
WITH p
CALL (p) {
  MATCH (p)-[r:HAS_ATTRIBUTE]->(a:Attribute)
  WHERE a.key IN $changedKeys
  DELETE r
}
CALL (p) {
  UNWIND $entries AS entry
  MERGE (a:Attribute {key: entry.key, value: entry.value})
  CREATE (p)-[:HAS_ATTRIBUTE {array: entry.array}]->(a)
}
CALL (p) {
  MATCH (p)-[r:REPORTS_TO]->()
  WHERE $managerChanged
  DELETE r
}
CALL (p) {
  MATCH (m:Principal {id: $managerId})
  WHERE $managerChanged
  CREATE (p)-[:REPORTS_TO]->(m)
}
RETURN properties(p) AS props
