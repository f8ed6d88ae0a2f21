// The SCIM view of a connector group: its name (with the key that keeps names unique within the
// connector), externalId and the attributes its client sent.
MATCH (g:Group {id: $id})
SET g.name = $name, g.name_key = $nameKey, g.connector_id = $externalId, g.scim = $scim, g.updated_at = datetime($now)
