// New groups of a snapshot with their members (users of the connector, checked by the caller,
// each with the display its line gives, or null), a batch at once; the group name constraint
// refuses a name the connector already uses. $source is the connector's name, $connector its id.
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
  scim: row.scim,
  created_at: datetime($now),
  created_by: $actor,
  updated_at: datetime($now)
})
WITH g, row
CALL (g, row) {
  UNWIND row.members AS member
  MATCH (p:Principal {id: member.id})
  CREATE (p)-[:MEMBER_OF {added_at: datetime($now), added_by: $actor, scim_display: member.display}]->(g)
}
