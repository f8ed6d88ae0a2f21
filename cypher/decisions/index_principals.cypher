// The decision index at start: principals in pages of $batch by id (after $after, up to $upTo),
// each with its properties (the index keeps what src/decisions/principal-table.ts holds of them,
// `attr.*` and `meta.*` included) and the groups it is a direct member of, each with when it
// joined (epoch milliseconds).
// Timestamps come as [epoch seconds, nanoseconds], numbers the driver reads as they are; the search
// card and a connector's SCIM body (the largest property) are left out. A map of the node's
// properties costs the database far less than reading its keys one by one.
MATCH (p:Principal)
WHERE p.id > $after AND p.id <= $upTo
WITH p
ORDER BY p.id
LIMIT $batch
RETURN p {.*, created_at: [p.created_at.epochSeconds, p.created_at.nanosecond],
  updated_at: [p.updated_at.epochSeconds, p.updated_at.nanosecond],
  last_login: [p.last_login.epochSeconds, p.last_login.nanosecond], deleted_at: null, card: null, scim: null} AS p,
  [(p)-[m:MEMBER_OF]->(g:Group) | [g.id, m.added_at.epochMillis]] AS groups
