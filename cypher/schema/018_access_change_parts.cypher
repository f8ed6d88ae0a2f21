// Access changes are stored a part at a time (docs/access-history.md, cypher/access-history/
// record.cypher): one `(:AccessChangePart)` node per part of at most 500 changes of one cause,
// its changes as columns, linked to one `(:AccessCause)` node per cause, which names the
// recorder that stored it. Parts are found by cause, by the last id they hold (a cursor), by
// instant (the purge), and by principal and resource through a full-text index of keyword
// tokens (each list element one exact token) over the parts labelled `:AccessChangeKeyed`
// (record.cypher keys new parts a few statements after it stores them).
CREATE CONSTRAINT access_cause_id IF NOT EXISTS FOR (k:AccessCause) REQUIRE k.id IS UNIQUE;
CREATE INDEX access_change_part_cause IF NOT EXISTS FOR (p:AccessChangePart) ON (p.cause_event_id);
CREATE INDEX access_change_part_last_id IF NOT EXISTS FOR (p:AccessChangePart) ON (p.last_id);
CREATE INDEX access_change_part_at IF NOT EXISTS FOR (p:AccessChangePart) ON (p.at_last);
CREATE FULLTEXT INDEX access_change_keys IF NOT EXISTS
FOR (p:AccessChangeKeyed) ON EACH [p.principals, p.resources]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'keyword'}};
// Changes stored before, one `(:AccessChange)` node each, become parts: per cause, its listed
// changes and its quiet ones apart, in id order, 500 a part, as the recorder cuts them. Each
// part is written and its changes deleted in one transaction of its own, so running it again
// converts only what is left.
MATCH (c:AccessChange)
WITH c ORDER BY c.id
WITH c.cause_event_id AS cause, size(c.actions_gained) + size(c.actions_lost) > 0 AS listed, collect(c) AS changes
UNWIND range(0, size(changes) - 1, 500) AS from
WITH cause, listed, changes[from..from + 500] AS rows
CALL (cause, listed, rows) {
  WITH cause, listed, rows, rows[0] AS first, [r IN rows | r.at] AS instants
  WITH cause, listed, rows, first, instants,
    reduce(m = instants[0], t IN instants | CASE WHEN t < m THEN t ELSE m END) AS at,
    reduce(m = instants[0], t IN instants | CASE WHEN t > m THEN t ELSE m END) AS at_last
  MERGE (k:AccessCause {id: cause})
    ON CREATE SET k.recorder = first.recorder, k.type = first.cause_event_type, k.at = at
  CREATE (p:AccessChangePart:AccessChangeKeyed)-[:CAUSED_BY]->(k)
  SET p.id = first.id,
    p.cause_event_id = cause,
    p.cause_event_type = first.cause_event_type,
    p.actor_type = first.actor_type,
    p.actor_id = first.actor_id,
    p.at = at,
    p.at_last = at_last,
    p.instants = CASE WHEN at = at_last THEN null ELSE instants END,
    p.count = size(rows),
    p.listed = CASE WHEN listed THEN size(rows) ELSE 0 END,
    p.first_id = first.id,
    p.last_id = last(rows).id,
    p.ids = [r IN rows | r.id],
    p.principals = [r IN rows | r.principal_id],
    p.principal_names = [r IN rows | r.principal_name],
    p.principal_types = [r IN rows | r.principal_type],
    p.resource_types = [r IN rows | r.resource_type],
    p.identifiers = [r IN rows | r.identifier],
    p.patterns = [r IN rows | coalesce(r.pattern, false)],
    p.gained = [r IN rows | reduce(s = '', a IN r.actions_gained | s + CASE WHEN s = '' THEN '' ELSE ' ' END + a)],
    p.lost = [r IN rows | reduce(s = '', a IN r.actions_lost | s + CASE WHEN s = '' THEN '' ELSE ' ' END + a)],
    p.via = [r IN rows | coalesce(r.via, '[]')],
    p.before = [r IN rows | coalesce(r.before, '')],
    p.resources = reduce(ks = [], r IN rows |
      ks + [key IN [r.resource_type + ':' + r.identifier, r.resource_type]
                + CASE WHEN r.pattern THEN [r.resource_type + '*'] ELSE [] END
              WHERE NOT key IN ks])
  WITH rows
  UNWIND rows AS r
  DELETE r
} IN TRANSACTIONS OF 20 ROWS;
DROP INDEX access_change_id IF EXISTS;
DROP INDEX access_change_principal IF EXISTS;
DROP INDEX access_change_resource IF EXISTS;
DROP INDEX access_change_cause IF EXISTS;
DROP INDEX access_change_at IF EXISTS;
