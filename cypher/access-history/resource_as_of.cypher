// Who had access to a resource change since an instant: for each principal with a change recorded
// after it on the resource itself or on a glob of its type (which the caller matches), per entry,
// the first such change, whose `before` is what held at the instant (access while acting for
// another left out). Its parts are found as
// `keyed.cypher` finds them (`$search`: the resource, and the globs of its type).
CALL () {
  MATCH (p:AccessChangeUnkeyed)
  RETURN p
  UNION
  CALL db.index.fulltext.queryNodes('access_change_keys', $search) YIELD node AS p
  RETURN p
}
WITH p
WHERE p.at_last > datetime($at)
WITH p, p.resource_types AS types, p.identifiers AS identifiers, p.patterns AS patterns, p.instants AS instants
UNWIND [i IN range(0, size(types) - 1)
  WHERE types[i] = $type AND (identifiers[i] = $identifier OR patterns[i])
    AND coalesce(instants[i], p.at) > datetime($at) AND coalesce(p.on_behalf_ids[i], '') = ''] AS i
WITH p, i, p.ids[i] AS id
ORDER BY id
WITH p.principals[i] AS id, p.identifiers[i] AS identifier, p.patterns[i] AS pattern,
  collect({part: p, i: i})[0] AS first
WITH id, identifier, pattern, first, first.part.before AS befores, first.part.before[first.i] AS before
RETURN id, first.part.principal_names[first.i] AS name, first.part.principal_types[first.i] AS type,
  identifier, pattern,
  // `=k`: the same as the part's change k (access-history repository, `repeats`).
  CASE WHEN before STARTS WITH '=' THEN befores[toInteger(substring(before, 1))] ELSE before END AS before
