// The identity graph around one principal, up to $depth (1-3) steps: its chain of managers,
// everyone reporting to it by distance, and the groups it belongs to directly or through
// nesting (each group at its shortest distance). Deleted principals never appear (they lose
// their manager and report edges, and their card, when deleted).
// People come back as their card, [id, name, type, email or ''], one property written with the
// principal (principals/create, update, seed/principals): a director has a thousand reports or
// more, and one property read each is a quarter of the work of four. A principal written
// without a card falls back to its properties, read by name only then (naming them outright
// would make the planner read all four for everyone). A report's card comes back with the id of
// its direct manager appended, so that a client can draw the chart below the first level: the
// next node on its path up. Reports are grouped by that node (which reads nothing) so that its
// id is read once per manager, not once per report; direct reports take $id, read not at all.
// Groups come back as [id, name, via]: via are the ids of the members (the principal, or groups
// one step nearer) through which a shortest path reaches the group, read once per group and
// member rather than once per path, as nesting can make many paths.
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
  WITH length(path) AS depth, nodes(path)[1] AS m,
    coalesce(r.card, [k IN ['id', 'name', 'type', 'email'] | coalesce(r[k], '')]) AS card
  WITH depth, m, collect(card) AS cards
  WITH depth, CASE depth WHEN 1 THEN $id ELSE m.id END AS manager, cards
  UNWIND cards AS card
  WITH depth, card + [manager] AS card
  ORDER BY depth, card[1], card[0]
  WITH depth, collect(card) AS everyone
  RETURN collect({depth: depth, count: size(everyone), principals: everyone[..$cap]}) AS reports
}
CALL (p) {
  WITH p
  WHERE 'group_member' IN $types
  MATCH path = (p)-[:MEMBER_OF*1..3]->(g:Group)
  WHERE length(path) <= $depth
  WITH g, nodes(path)[-2] AS member, min(length(path)) AS steps
  WITH g, collect([steps, member.id]) AS ways, min(steps) AS depth
  ORDER BY depth, g.name, g.id
  WITH depth, collect([g.id, g.name, [w IN ways WHERE w[0] = depth | w[1]]]) AS everyone
  RETURN collect({depth: depth, count: size(everyone), groups: everyone[..$cap]}) AS groups
}
RETURN managers, reports, groups
