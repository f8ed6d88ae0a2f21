// New groups of a provisioning source with their members, a batch at once: $source is the
// connector's name, $connector its id. Members are principals the caller checked; each membership
// edge gets the properties its row carries (a SCIM client's display), each group those of
// `row.extra` (the attributes its client sent). The group name constraint refuses a name the
// connector already uses.
UNWIND $rows AS row
CREATE (g:Group {
  id: row.id,
  name: row.name,
  name_key: row.nameKey,
  description: null,
  source: 'connector',
  connector_source: $source,
  connector_ref: $connector,
  connector_id: row.externalId,
  created_at: datetime($now),
  created_by: $actor,
  updated_at: datetime($now)
})
SET g += row.extra
WITH g, row
CALL (g, row) {
  UNWIND row.members AS member
  MATCH (p:Principal {id: member.id})
  CREATE (p)-[r:MEMBER_OF {added_at: datetime($now), added_by: $actor}]->(g)
  SET r += member.props
}
