// Announces, as far as they were stored, the causes whose messages still wait for their count
// (record.cypher): a recorder that lost its lease midway never stores their last part, and the
// recorder after it skips a cause stored already. Each such message gets the count of its
// cause's messages that were stored, and its outbox entries become due. Run by a recorder as it
// takes the lease, before it stores anything itself.
MATCH (a:AccessChangeMessage)-[:ANNOUNCES]->(:AccessChangePart)-[:CAUSED_BY]->(k:AccessCause)
WHERE a.parts IS NULL
WITH DISTINCT k
CALL (k) {
  MATCH (k)<-[:CAUSED_BY]-(:AccessChangePart)<-[:ANNOUNCES]-(a:AccessChangeMessage)
  WITH collect(a) AS all, max(a.part) AS parts
  UNWIND all AS a
  WITH a, parts
  WHERE a.parts IS NULL
  SET a.parts = parts
  WITH a
  MATCH (w:WebhookMessage)
  WHERE w.id STARTS WITH a.id + '/' AND w.next_attempt_at IS NULL
  SET w.next_attempt_at = w.occurred_at
}
RETURN count(k) AS closed
