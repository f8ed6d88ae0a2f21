// New groups of a snapshot with their members (users of the connector, checked by the caller),
// a batch at once; the group name constraint refuses a name the connector already uses.
UNWIND $rows AS row
CREATE (g:Group {
  id: row.id,
  name: row.name,
  name_key: row.nameKey,
  description: null,
  source: 'connector',
  connector_source: $source,
  connector_id: row.externalId,
  scim: row.scim,
  created_at: datetime($now),
  created_by: $actor,
  updated_at: datetime($now)
})
WITH g, row
CALL (g, row) {
  UNWIND row.members AS memberId
  MATCH (p:Principal {id: memberId})
  CREATE (p)-[:MEMBER_OF {added_at: datetime($now), added_by: $actor}]->(g)
}
