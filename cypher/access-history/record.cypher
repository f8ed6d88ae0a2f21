// Stores access changes, a part at a time: a part is at most 500 changes of one cause (or its
// quiet changes, the same actions held otherwise, which have no message), one
// `(:AccessChangePart)` node holding them as columns, lists of one value per change in id order:
// who (`principals`, `principal_names`, `principal_types`), what (`resource_types`,
// `identifiers`, `patterns`), the actions gained and lost (space-separated), `via` and the whole
// entry before the change (`before`, JSON; '' where there was none), which `as_of` reads back
// (in both, a value an earlier change of the part holds is written `=k`, k that change's index),
// and for access while acting for another (a delegation moved it) that principal (`on_behalf_*`;
// '' for the principal's own access).
// Each column comes as one string, its values joined by `part.sep`, which none of them holds
// (`patterns`: '1' for a glob, '0' for a resource).
// `principal_keys` and `resources` are the keys a part is found by: the last six characters of
// each principal's id (schema 020), or, in a part of a cause reaching a large share of the
// principals, at most 16 prefixes of their ids, each written `<prefix>*` (access-history
// repository, `principalKeys`); and `type:identifier`, `type`, and `type*` for a glob.
// Its cause is one `(:AccessCause)` node, created by the first recorder that stores any of its
// parts: a part whose cause another recorder stored already (one that held the lease before) is
// skipped, so a cause is stored once.
// A part is stored `:AccessChangeUnkeyed`; the recorder keys them later in bulk (key.cypher),
// once what waits is stored: reads by principal or resource take the unkeyed parts as well.
// Each part of listed changes also goes, as one `access.changed` message, into the outbox of
// every active webhook that subscribes to it (`*`, `access.*` or `access.changed`), in the same
// transaction: the message exists if and only if its changes were stored. The message node says
// which of its cause's messages it is (`part` of `parts`) and `-[:ANNOUNCES]->` its part, whose
// columns are its data (messages.cypher): the changes are not sent or stored twice.
// A cause cut in parts as it is computed does not know the count of its messages until its last:
// the others come with `parts` null, and their outbox entries are not due (`next_attempt_at`
// null) until the part that says the count is stored, which gives it to them and makes them due.
// Only the holder of the recorder's lease stores (claim.cypher): the statement first locks the
// lease (setting its holder to itself), then reads who holds it. A recorder that lost the lease
// (it stalled past it, and another took it) stores nothing and learns so (`held` false); a claim
// made while a store runs waits for it. No lease yet, or one run out, lets the store go ahead.
// The plan follows the indexes alone (the same on an empty database as on one holding thousands
// of parts), so it is never re-planned as a large change moves the statistics: a re-plan held the
// first store after one about 0.35 s.
CYPHER replan=skip
OPTIONAL MATCH (l:AccessHistoryLease {name: 'recorder'})
SET l.holder = l.holder
WITH l IS NULL OR l.holder IS NULL OR l.holder = $recorder OR l.until < datetime() AS held
CALL (held) {
  UNWIND CASE WHEN held THEN $parts ELSE [] END AS part
  WITH part, part.store AS s
  MERGE (k:AccessCause {id: s.cause_event_id})
    ON CREATE SET k.recorder = $recorder, k.type = s.cause_event_type, k.at = datetime(s.at)
  WITH part, s, k
  WHERE k.recorder = $recorder
  CREATE (p:AccessChangePart:AccessChangeUnkeyed)-[:CAUSED_BY]->(k)
  WITH part, s, p, part.columns AS c, part.sep AS sep
  SET p = s,
    p.at = datetime(s.at),
    p.at_last = datetime(s.at_last),
    p.instants = [t IN s.instants | datetime(t)],
    p.ids = split(c.ids, sep),
    p.principals = split(c.principals, sep),
    p.principal_names = split(c.principal_names, sep),
    p.principal_types = split(c.principal_types, sep),
    p.resource_types = split(c.resource_types, sep),
    p.identifiers = split(c.identifiers, sep),
    p.patterns = [x IN split(c.patterns, sep) | x = '1'],
    p.gained = split(c.gained, sep),
    p.lost = split(c.lost, sep),
    p.via = split(c.via, sep),
    p.before = split(c.before, sep),
    p.on_behalf_ids = split(c.on_behalf_ids, sep),
    p.on_behalf_names = split(c.on_behalf_names, sep),
    p.on_behalf_types = split(c.on_behalf_types, sep),
    p.resources = split(c.resources, sep),
    p.principal_keys = split(c.principal_keys, sep)
  WITH part, p
  CALL (part, p) {
    MATCH (w:Webhook {status: 'active'})
    WHERE any(e IN w.events WHERE e IN ['*', 'access.*', 'access.changed'])
    WITH collect(w) AS hooks
    WHERE size(hooks) > 0 AND part.message IS NOT NULL
    CREATE (:AccessChangeMessage {
      id: part.id,
      occurred_at: datetime(part.at),
      part: part.message.part,
      parts: part.message.parts
    })-[:ANNOUNCES]->(p)
    WITH hooks
    UNWIND hooks AS w
    CREATE (:WebhookMessage {
      id: part.id + '/' + w.id,
      webhook_id: w.id,
      event_id: part.id,
      event_type: 'access.changed',
      occurred_at: datetime(part.at),
      attempt: 0,
      next_attempt_at: CASE WHEN part.message.parts IS NOT NULL THEN datetime(part.at) END
    })
  }
  CALL (part, p) {
    WITH part, p
    WHERE part.message.parts IS NOT NULL AND part.message.part > 1
    MATCH (p)-[:CAUSED_BY]->(:AccessCause)<-[:CAUSED_BY]-(:AccessChangePart)<-[:ANNOUNCES]-(a:AccessChangeMessage)
    WHERE a.parts IS NULL
    SET a.parts = part.message.parts
    WITH a
    MATCH (w:WebhookMessage)
    WHERE w.id STARTS WITH a.id + '/' AND w.next_attempt_at IS NULL
    SET w.next_attempt_at = w.occurred_at
  }
  RETURN count(part) AS parts
}
RETURN held, parts
