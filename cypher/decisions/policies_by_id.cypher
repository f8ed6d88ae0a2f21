// Policies as they are now, for the decision index to follow a change (the shape of
// decisions/index_policies); ids that no longer exist give no row.
UNWIND $ids AS id
MATCH (pol:Policy {id: id})
RETURN pol {.*, activated_at: pol.activated_at.epochMillis, valid_from: pol.valid_from.epochMillis,
  valid_until: pol.valid_until.epochMillis, created_at: pol.created_at.epochMillis,
  updated_at: pol.updated_at.epochMillis, deleted_at: pol.deleted_at.epochMillis} AS props,
  [(pol)-[e:APPLIES_TO]->(s) | [s.id, e.since.epochMillis]] AS since
