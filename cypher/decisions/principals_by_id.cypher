// Principals as they are now, for the decision index to follow a change (the shape of
// decisions/index_principals, without the search card or a SCIM body); ids that no longer exist
// give no row.
UNWIND $ids AS id
MATCH (p:Principal {id: id})
RETURN p {.*, created_at: [p.created_at.epochSeconds, p.created_at.nanosecond],
  updated_at: [p.updated_at.epochSeconds, p.updated_at.nanosecond],
  last_login: [p.last_login.epochSeconds, p.last_login.nanosecond], deleted_at: null, card: null, scim: null} AS p,
  [(p)-[m:MEMBER_OF]->(g:Group) | [g.id, m.added_at.epochMillis]] AS groups
