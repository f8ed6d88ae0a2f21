// One piece of a submitted snapshot, by its place in the snapshot (none past the last).
MATCH (c:SyncChunk {sync_id: $syncId, seq: $seq})
RETURN c.text AS text
