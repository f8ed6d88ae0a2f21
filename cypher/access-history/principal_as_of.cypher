// One principal's access changes around an instant, per resource (or glob): the first recorded
// after it, whose `before` is what held at the instant, and the last at or before it that gained
// actions, which made the entry true. Access while acting for another (a delegation moved it) is
// not the principal's own.
MATCH (c:AccessChange {principal_id: $principalId})
WHERE c.on_behalf_of_id IS NULL
WITH c
ORDER BY c.id
WITH c.resource_type AS type, c.identifier AS identifier, c.pattern AS pattern, collect(c) AS changes
WITH type, identifier, pattern,
     [x IN changes WHERE x.at > datetime($at)][0] AS next,
     last([x IN changes WHERE x.at <= datetime($at) AND size(x.actions_gained) > 0]) AS made
RETURN type, identifier, pattern,
       next IS NOT NULL AS changed_since,
       next.before AS before,
       made {.at, .cause_event_id, .cause_event_type, .actor_type, .actor_id} AS made_by
