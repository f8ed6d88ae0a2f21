// Stores access changes, whole parts at a time: a part is at most 500 changes of one cause (or
// its quiet changes, the same actions held otherwise, which have no message). `before` is the
// whole entry before the change (JSON), which `as_of` reads back. A part whose cause another
// recorder stored already (one that held the lease before) is skipped: a cause is stored once.
// Each part also goes, as one `access.changed` message, into the outbox of every active webhook
// that subscribes to it (`*`, `access.*` or `access.changed`), in the same transaction: the
// message exists if and only if its changes were stored.
UNWIND $parts AS part
WITH part
WHERE NOT EXISTS {
  MATCH (other:AccessChange {cause_event_id: part.cause_id})
  WHERE other.recorder <> $recorder
}
CALL (part) {
  UNWIND part.rows AS r
  CREATE (c:AccessChange)
  SET c = r {.*, at: datetime(r.at), recorder: $recorder}
}
CALL (part) {
  MATCH (w:Webhook {status: 'active'})
  WHERE any(p IN w.events WHERE p IN ['*', 'access.*', 'access.changed'])
  WITH collect(w) AS hooks
  WHERE size(hooks) > 0 AND part.body IS NOT NULL
  CREATE (:AccessChangeMessage {id: part.id, occurred_at: datetime(part.at), body: part.body})
  WITH hooks
  UNWIND hooks AS w
  CREATE (:WebhookMessage {
    id: part.id + '/' + w.id,
    webhook_id: w.id,
    event_id: part.id,
    event_type: 'access.changed',
    occurred_at: datetime(part.at),
    attempt: 0,
    next_attempt_at: datetime(part.at)
  })
}
RETURN count(part) AS parts
