// A manager named the way SCIM clients name one: its SCIM id, else the externalId of a user of
// the same connector (by its id). An externalId that several of the connector's users share is
// ambiguous and names none of them.
WITH
  COLLECT {
    MATCH (m:Principal {id: $ref})
    WHERE m.connector_ref = $connector AND m.type = 'USER' AND m.status IN ['active', 'suspended']
    RETURN m.id
  } AS byId,
  COLLECT {
    MATCH (m:Principal {connector_id: $ref})
    WHERE m.connector_ref = $connector AND m.type = 'USER' AND m.status IN ['active', 'suspended']
    RETURN m.id
  } AS byExternalId
RETURN CASE WHEN size(byId) > 0 THEN byId[0] WHEN size(byExternalId) = 1 THEN byExternalId[0] END AS id
