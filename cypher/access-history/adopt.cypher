// Takes over, for $recorder, the causes another recorder stored in part: one that stalled past
// its lease while it stored a large cause, and stored nothing more once another took the lease
// (record.cypher). Such a cause was cut in parts as it was computed, and its messages still wait
// for the count its last part would have given (so none went out): that is what tells it from a
// cause stored whole. The one taking the lease computed the same causes ($causes: each id and how
// many changes it holds of it); where it holds more than is stored, the stored parts, their
// messages and outbox entries go, and the cause becomes $recorder's, which then stores its own
// parts of it whole. Any other cause stays as it is.
UNWIND $causes AS c
MATCH (k:AccessCause {id: c.id})
WHERE k.recorder <> $recorder
  AND EXISTS {
    MATCH (k)<-[:CAUSED_BY]-(:AccessChangePart)<-[:ANNOUNCES]-(a:AccessChangeMessage)
    WHERE a.parts IS NULL
  }
  AND NOT EXISTS {
    MATCH (k)<-[:CAUSED_BY]-(:AccessChangePart)<-[:ANNOUNCES]-(a:AccessChangeMessage)
    WHERE a.parts IS NOT NULL
  }
CALL (k) {
  OPTIONAL MATCH (k)<-[:CAUSED_BY]-(p:AccessChangePart)
  RETURN coalesce(sum(p.count), 0) AS stored
}
WITH k, c, stored
WHERE stored < c.rows
CALL (k) {
  MATCH (k)<-[:CAUSED_BY]-(p:AccessChangePart)
  OPTIONAL MATCH (p)<-[:ANNOUNCES]-(a:AccessChangeMessage)
  CALL (a) {
    MATCH (w:WebhookMessage)
    WHERE a IS NOT NULL AND w.id STARTS WITH a.id + '/'
    DELETE w
  }
  DETACH DELETE a, p
}
SET k.recorder = $recorder
RETURN k.id AS id
