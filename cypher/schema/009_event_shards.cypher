// Events are numbered per shard of the event sequence: the sequence written so far is shard 0.
CREATE INDEX audit_event_shard_seq IF NOT EXISTS FOR (e:AuditEvent) ON (e.shard, e.seq);
MATCH (s:Sequence {name: 'events'}) SET s.shard = 0;
MATCH (e:AuditEvent) WHERE e.shard IS NULL CALL (e) { SET e.shard = 0 } IN TRANSACTIONS OF 10000 ROWS;
DROP INDEX audit_event_seq IF EXISTS
