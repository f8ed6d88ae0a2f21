// A batch of recorded decisions: the answer as JSON, with what a reader in Neo4j Browser looks
// for first as properties of its own.
UNWIND $rows AS row
CREATE (:Decision {
  id: row.id,
  principal_id: row.principal_id,
  decision: row.decision,
  evaluated_at: datetime(row.evaluated_at),
  record: row.record
})
