// The identity graph around one principal, up to $depth (1-3) steps: its chain of managers,
// everyone reporting to it by distance, and the groups it belongs to directly or through
// nesting (each group at its shortest distance). Deleted principals never appear (they lose
// their manager and report edges, and their card, when deleted).
// People come back as their card, [id, name, type, email or ''], one property written with the
// principal (principals/create, update, create_many): a director has a thousand reports or
// more, and one property read each is a quarter of the work of four. A principal written
// without a card falls back to its properties, read by name only then (naming them outright
// would make the planner read all four for everyone). Reports also name their direct manager,
// so that a client can draw the chart below the first level: the walk goes up from each manager
// (the principal itself, then its reports two levels down) and then one step to that manager's
// reports, so each manager's id is read once, not once per report, and the reports keep the one
// read of their card. Their managers come back as a list beside the cards, in the same order.
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
  MATCH up = (m)-[:REPORTS_TO*0..2]->(p)
  WHERE length(up) < $depth
  WITH length(up) + 1 AS depth, m.id AS manager, m
  MATCH (r)-[:REPORTS_TO]->(m)
  WHERE NOT r:Deleted
  WITH depth, manager, coalesce(r.card, [k IN ['id', 'name', 'type', 'email'] | coalesce(r[k], '')]) AS card
  ORDER BY depth, card[1], card[0]
  WITH depth, collect(card) AS everyone, collect(manager) AS managers
  RETURN collect({depth: depth, count: size(everyone), principals: everyone[..$cap], managers: managers[..$cap]}) AS reports
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
