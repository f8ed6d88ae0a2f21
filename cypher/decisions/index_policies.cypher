// Every policy that is not deleted (inactive ones too: simulation may make them active), its
// properties as stored but for its timestamps, which come as epoch milliseconds: numbers the
// driver reads as they are, where temporal values cost it more than the rest of the row; and when
// each of its subjects came to it (the APPLIES_TO edges' `since`), which dates its grants.
MATCH (pol:Policy)
WHERE pol.status <> 'deleted'
RETURN pol {.*, activated_at: pol.activated_at.epochMillis, valid_from: pol.valid_from.epochMillis,
  valid_until: pol.valid_until.epochMillis, created_at: pol.created_at.epochMillis,
  updated_at: pol.updated_at.epochMillis, deleted_at: pol.deleted_at.epochMillis} AS props,
  [(pol)-[e:APPLIES_TO]->(s) | [s.id, e.since.epochMillis]] AS since
