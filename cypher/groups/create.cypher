// API groups and connector groups alike; name_key is unique, so a name clash within one
// source fails on the constraint. A connector group holds its connector's id in connector_ref
// (null, so absent, for an API group).
CREATE (g:Group {
  id: $id,
  name: $name,
  name_key: $nameKey,
  description: $description,
  source: $source,
  connector_source: $connectorSource,
  connector_ref: $connectorRef,
  connector_id: $connectorId,
  created_at: datetime($now),
  created_by: $createdBy,
  updated_at: datetime($now)
})
RETURN g {
  .id, .name, .description, .source, .connector_source, .connector_id, .created_at, .created_by, .updated_at,
  member_count: 0
} AS group
