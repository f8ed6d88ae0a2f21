// Access changes in the order they were recorded (oldest first), read from the parts that hold
// them: each part's changes are its columns at one index `i`. Filters are appended by the
// access-history repository from a fixed set of predicates: on parts (/*PARTS*/), and on each
// change (/*ROWS*/, over the columns bound below); /*KEYED*/ is where the parts of a principal or
// a resource are looked up (`keyed.cypher`) instead of taken all.
/*KEYED*/
MATCH (p:AccessChangePart)
WHERE p.listed > 0 /*PARTS*/
WITH p, p.ids AS ids, p.principals AS principals, p.resource_types AS types, p.identifiers AS identifiers,
  p.gained AS gained, p.lost AS lost, p.instants AS instants
UNWIND [i IN range(0, size(ids) - 1) WHERE (gained[i] <> '' OR lost[i] <> '') /*ROWS*/] AS i
WITH p, i, ids[i] AS id
ORDER BY id
SKIP $skip
LIMIT $limit
RETURN {
  id: id,
  at: coalesce(p.instants[i], p.at),
  principal_id: p.principals[i],
  principal_name: p.principal_names[i],
  principal_type: p.principal_types[i],
  resource_type: p.resource_types[i],
  identifier: p.identifiers[i],
  pattern: p.patterns[i],
  gained: p.gained[i],
  lost: p.lost[i],
  // `=k`: the same as the part's change k (access-history repository, `repeats`).
  via: CASE WHEN p.via[i] STARTS WITH '=' THEN p.via[toInteger(substring(p.via[i], 1))] ELSE p.via[i] END,
  on_behalf_of_id: p.on_behalf_ids[i],
  on_behalf_of_name: p.on_behalf_names[i],
  on_behalf_of_type: p.on_behalf_types[i],
  cause_event_id: p.cause_event_id,
  cause_event_type: p.cause_event_type,
  actor_type: p.actor_type,
  actor_id: p.actor_id
} AS change
