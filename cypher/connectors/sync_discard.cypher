// Pieces of a snapshot whose sync could not be created.
MATCH (c:SyncChunk {sync_id: $syncId})
DELETE c
