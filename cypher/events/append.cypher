// Writes the audit events of one transaction as its last statement, numbered with the next value
// of one of the event sequences (the shard the transaction drew). A sequence node's write lock is
// held until the transaction commits, so each shard hands its numbers out in commit order: once
// an instance reads a shard's sequence at N, every event of that shard numbered N or less is
// visible to it. Taking the lock last keeps it held only as long as the commit itself, and with
// several shards, transactions that drew different ones commit side by side (their log writes
// flushed together) instead of queueing on one lock.
//
// Each event also goes into the outbox of every active webhook that subscribes to its type
// (`*`, the type itself, or a `prefix.*`), in the same transaction: an entry exists if and only if
// its change committed. Webhooks are only read here, never locked.
MERGE (s:Sequence {name: $sequence})
  ON CREATE SET s.value = 0, s.shard = $shard
SET s.value = s.value + 1
WITH s.value AS seq
CALL (seq) {
  UNWIND $events AS event
  CREATE (e:AuditEvent)
  SET e = event {.*, occurred_at: datetime(event.occurred_at), seq: seq, shard: $shard}
}
CALL () {
  MATCH (w:Webhook {status: 'active'})
  UNWIND $events AS event
  WITH w, event
  WHERE any(p IN w.events WHERE p = '*' OR p = event.type
    OR (p ENDS WITH '.*' AND event.type STARTS WITH substring(p, 0, size(p) - 1)))
  CREATE (:WebhookMessage {
    id: event.id + '/' + w.id,
    webhook_id: w.id,
    event_id: event.id,
    event_type: event.type,
    occurred_at: datetime(event.occurred_at),
    attempt: 0,
    next_attempt_at: datetime(event.occurred_at)
  })
}
RETURN seq
