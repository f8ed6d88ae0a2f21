// Who had access to a resource change since an instant: each part holding a change recorded after
// it on the resource itself or on a glob of its type (which the caller matches), with those
// changes (access while acting for another left out): where each stands in the part, its
// principal, its glob (null for the resource itself) and its `before`. The caller keeps, per
// principal and entry, the first change, whose `before` is what held at the instant: a part's
// `first_id` and `last_id` bound its changes' ids, which the caller reads
// (`resource_as_of_ids.cypher`) only where two parts' bounds overlap. `last_id` also names the
// part (it is indexed). Its parts are found as `keyed.cypher` finds them (`$search`: the
// resource, and the globs of its type). Each column is read once per part, and only the columns
// the caller needs.
CALL () {
  MATCH (p:AccessChangeUnkeyed)
  RETURN p
  UNION
  CALL db.index.fulltext.queryNodes('access_change_keys', $search) YIELD node AS p
  RETURN p
}
WITH p, datetime($at) AS since
WHERE p.at_last > since
WITH p, since, p.at AS at, p.resources AS resources, coalesce(p.on_behalf_ids, []) AS behalf
// A part whose changes all come after the instant, are all about the resource itself (its
// resources name it and its type, nothing else) and none while acting for another: every change
// is found (`found` null), and no other column is read.
WITH p, since, at, behalf,
  at > since AND size(resources) = 2 AND $type IN resources AND $type + ':' + $identifier IN resources
  AND none(b IN behalf WHERE b <> '') AS whole
CALL (p, since, at, behalf, whole) {
  WITH p
  WHERE whole
  RETURN null AS found, p.principals AS principals, null AS globs, p.before AS befores
  UNION
  WITH p, since, at, behalf
  WHERE NOT whole
  WITH p, since, at, behalf, p.resource_types AS types, p.identifiers AS identifiers,
    p.patterns AS patterns, p.instants AS instants
  WITH p, identifiers, patterns, [i IN range(0, size(types) - 1)
    WHERE types[i] = $type AND (identifiers[i] = $identifier OR patterns[i])
      AND coalesce(instants[i], at) > since AND coalesce(behalf[i], '') = ''] AS found
  WHERE size(found) > 0
  WITH p, found, identifiers, patterns, p.principals AS principals
  RETURN found, [i IN found | principals[i]] AS principals,
    CASE WHEN any(i IN found WHERE patterns[i])
      THEN [i IN found | CASE WHEN patterns[i] THEN identifiers[i] END] END AS globs,
    p.before AS befores
}
RETURN p.first_id AS first_id, p.last_id AS last_id, found, principals, globs,
  // A change's `before` may be `=k`: the same as the part's change k (access-history repository,
  // `repeats`). Where the changes found are a good share of the part, its whole column is given
  // and the caller follows those; otherwise each is followed here.
  CASE WHEN found IS NULL OR size(found) * 4 >= size(befores) THEN befores END AS column,
  CASE WHEN found IS NOT NULL AND size(found) * 4 < size(befores) THEN [i IN found |
    CASE WHEN befores[i] STARTS WITH '=' THEN befores[toInteger(substring(befores[i], 1))]
    ELSE befores[i] END] END AS followed
