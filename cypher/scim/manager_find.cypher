// A manager named the way SCIM clients name one: its SCIM id, else the externalId of a user of
// the same connector.
CALL () {
  MATCH (m:Principal {id: $ref})
  WHERE m.connector_source = $source AND m.type = 'USER' AND m.status IN ['active', 'suspended']
  RETURN m, 0 AS rank
  UNION
  MATCH (m:Principal {connector_id: $ref})
  WHERE m.connector_source = $source AND m.type = 'USER' AND m.status IN ['active', 'suspended']
  RETURN m, 1 AS rank
}
WITH m ORDER BY rank LIMIT 1
RETURN m.id AS id
