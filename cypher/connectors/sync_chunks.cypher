MATCH (c:SyncChunk {sync_id: $syncId})
RETURN c.text AS text
ORDER BY c.seq
