// The snapshot's pieces go once it is reconciled; the sync keeps its outcome.
MATCH (s:ConnectorSync {id: $syncId})
SET s.completed_at = datetime()
WITH s
CALL (s) {
  MATCH (c:SyncChunk {sync_id: s.id})
  DELETE c
}
