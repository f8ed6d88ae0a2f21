// Whether $managerId can manage $id: it must exist, not be deleted, and its own chain of
// managers must not lead back to $id (chains have one manager per step, so this walk is linear).
OPTIONAL MATCH (m:Principal {id: $managerId})
RETURN m IS NOT NULL AS exists,
       m.status AS status,
       m.id = $id OR EXISTS { (m)-[:REPORTS_TO*1..1000]->(:Principal {id: $id}) } AS cycle
