// One principal's access changes around an instant, per resource (or glob): the first recorded
// after it, whose `before` is what held at the instant, and the last at or before it that gained
// actions, which made the entry true. Its parts are found as `keyed.cypher` finds them. Access
// while acting for another (a delegation moved it) is not the principal's own: left out.
CALL () {
  MATCH (p:AccessChangeUnkeyed)
  RETURN p
  UNION
  CALL db.index.fulltext.queryNodes('access_change_keys', $search) YIELD node AS p
  RETURN p
}
WITH p, p.principals AS principals
UNWIND [i IN range(0, size(principals) - 1)
  WHERE principals[i] = $principalId AND coalesce(p.on_behalf_ids[i], '') = ''] AS i
WITH p, i, p.ids[i] AS id, p.before[i] AS before
ORDER BY id
WITH p.resource_types[i] AS type, p.identifiers[i] AS identifier, p.patterns[i] AS pattern,
  collect({
    at: coalesce(p.instants[i], p.at),
    gained: p.gained[i],
    // `=k`: the same as the part's change k (access-history repository, `repeats`).
    before: CASE WHEN before STARTS WITH '=' THEN p.before[toInteger(substring(before, 1))] ELSE before END,
    part: p
  }) AS changes
WITH type, identifier, pattern,
  [x IN changes WHERE x.at > datetime($at)][0] AS next,
  last([x IN changes WHERE x.at <= datetime($at) AND x.gained <> '']) AS made
RETURN type, identifier, pattern,
  next IS NOT NULL AS changed_since,
  next.before AS before,
  CASE WHEN made IS NULL THEN null ELSE {
    at: made.at,
    cause_event_id: made.part.cause_event_id,
    cause_event_type: made.part.cause_event_type,
    actor_type: made.part.actor_type,
    actor_id: made.part.actor_id
  } END AS made_by
