// Every group with the groups it is nested in directly, each with when it was nested there
// (epoch milliseconds; null where unknown).
MATCH (g:Group)
RETURN g.id AS id, g.name AS name,
  [(g)-[m:MEMBER_OF]->(parent:Group) | [parent.id, m.added_at.epochMillis]] AS parents
