// A connector group as its source has it now: its name (with the key that keeps names unique
// within the connector), its external id, and the further properties the source keeps.
MATCH (g:Group {id: $id})
SET g.name = $name, g.name_key = $nameKey, g.connector_id = $externalId, g.updated_at = datetime($now)
SET g += $extra
