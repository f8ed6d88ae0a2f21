// Snapshots submitted for reconciliation wait as chunks of JSON lines until their job has read them.
CREATE CONSTRAINT connector_sync_id IF NOT EXISTS FOR (s:ConnectorSync) REQUIRE s.id IS UNIQUE;
CREATE INDEX connector_sync_connector IF NOT EXISTS FOR (s:ConnectorSync) ON (s.connector_id);
CREATE INDEX sync_chunk_sync IF NOT EXISTS FOR (c:SyncChunk) ON (c.sync_id);
