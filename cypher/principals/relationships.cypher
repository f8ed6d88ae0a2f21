// The identity graph around one principal, up to $depth (1-3) steps: its chain of managers,
// everyone reporting to it by distance, and the groups it belongs to directly or through
// nesting (each group at its shortest distance). Deleted principals never appear (they lose
// their manager and report edges, and their card, when deleted).
// People come back as their card, [id, name, type, email or ''], one property written with the
// principal (principals/create, update, seed/principals): a director has a thousand reports or
// more, and one property read each is a quarter of the work of four. A principal written
// without a card falls back to its properties, read by name only then (naming them outright
// would make the planner read all four for everyone). Groups come back as [id, name].
MATCH (p:Principal {id: $id})
CALL (p) {
  WITH p
  WHERE 'manager' IN $types
  MATCH path = (p)-[:REPORTS_TO*1..3]->(m)
  WHERE length(path) <= $depth AND NOT m:Deleted
  WITH length(path) AS depth, coalesce(m.card, [k IN ['id', 'name', 'type', 'email'] | coalesce(m[k], '')]) AS card
  ORDER BY depth
  RETURN collect({depth: depth, principal: card}) AS managers
}
CALL (p) {
  WITH p
  WHERE 'reports' IN $types
  MATCH path = (r)-[:REPORTS_TO*1..3]->(p)
  WHERE length(path) <= $depth AND NOT r:Deleted
  WITH length(path) AS depth, coalesce(r.card, [k IN ['id', 'name', 'type', 'email'] | coalesce(r[k], '')]) AS card
  ORDER BY depth, card[1], card[0]
  WITH depth, collect(card) AS everyone
  RETURN collect({depth: depth, count: size(everyone), principals: everyone[..$cap]}) AS reports
}
CALL (p) {
  WITH p
  WHERE 'group_member' IN $types
  MATCH path = (p)-[:MEMBER_OF*1..3]->(g:Group)
  WHERE length(path) <= $depth
  WITH g, min(length(path)) AS depth
  ORDER BY depth, g.name, g.id
  WITH depth, collect([g.id, g.name]) AS everyone
  RETURN collect({depth: depth, count: size(everyone), groups: everyone[..$cap]}) AS groups
}
RETURN managers, reports, groups
