// One piece of a submitted snapshot; the sync that reads it is created once every piece is in.
CREATE (:SyncChunk {sync_id: $syncId, seq: $seq, text: $text})
