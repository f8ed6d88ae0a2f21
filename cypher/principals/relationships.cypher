// The identity graph around one principal, up to $depth (1-3) steps: its chain of managers,
// everyone reporting to it by distance, and the groups it belongs to directly or through
// nesting (each group at its shortest distance). Deleted principals never appear.
// People come back as [id, name, type, email] and groups as [id, name]: a director's answer
// holds hundreds of them, and tuples are much cheaper than maps to encode and decode.
MATCH (p:Principal {id: $id})
CALL (p) {
  WITH p WHERE 'manager' IN $types
  MATCH path = (p)-[:REPORTS_TO*1..3]->(m:Principal)
  WHERE length(path) <= $depth AND NOT m:Deleted
  WITH length(path) AS depth, m
  ORDER BY depth
  RETURN collect({depth: depth, principal: [m.id, m.name, m.type, m.email]}) AS managers
}
CALL (p) {
  WITH p WHERE 'reports' IN $types
  MATCH path = (r:Principal)-[:REPORTS_TO*1..3]->(p)
  WHERE length(path) <= $depth AND NOT r:Deleted
  WITH length(path) AS depth, r
  ORDER BY depth, r.name, r.id
  WITH depth, collect([r.id, r.name, r.type, r.email]) AS everyone
  RETURN collect({depth: depth, count: size(everyone), principals: everyone[..$cap]}) AS reports
}
CALL (p) {
  WITH p WHERE 'group_member' IN $types
  MATCH path = (p)-[:MEMBER_OF*1..3]->(g:Group)
  WHERE length(path) <= $depth
  WITH g, min(length(path)) AS depth
  ORDER BY depth, g.name, g.id
  WITH depth, collect([g.id, g.name]) AS everyone
  RETURN collect({depth: depth, count: size(everyone), groups: everyone[..$cap]}) AS groups
}
RETURN managers, reports, groups
