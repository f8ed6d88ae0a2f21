// Writes the audit events of one transaction as its last statement, numbered with the next value
// of one of the event sequences (the shard the transaction drew). A sequence node's write lock is
// held until the transaction commits, so each shard hands its numbers out in commit order: once
// an instance reads a shard's sequence at N, every event of that shard numbered N or less is
// visible to it. Taking the lock last keeps it held only as long as the commit itself, and with
// several shards, transactions that drew different ones commit side by side (their log writes
// flushed together) instead of queueing on one lock.
MERGE (s:Sequence {name: $sequence})
  ON CREATE SET s.value = 0, s.shard = $shard
SET s.value = s.value + 1
WITH s.value AS seq
CALL (seq) {
  UNWIND $events AS event
  CREATE (e:AuditEvent)
  SET e = event {.*, occurred_at: datetime(event.occurred_at), seq: seq, shard: $shard}
}
RETURN seq
