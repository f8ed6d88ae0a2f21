// Writes the audit events of one transaction as its last statement, numbered with the next value
// of the event sequence. The sequence node's write lock is held until the transaction commits,
// so numbers are handed out in commit order: once an instance reads the sequence at N, every
// event numbered N or less is visible to it. Taking the lock last keeps it held only as long as
// the commit itself.
MERGE (s:Sequence {name: 'events'})
  ON CREATE SET s.value = 0
SET s.value = s.value + 1
WITH s.value AS seq
CALL (seq) {
  UNWIND $events AS event
  CREATE (e:AuditEvent)
  SET e = event {.*, occurred_at: datetime(event.occurred_at), seq: seq}
}
RETURN seq
