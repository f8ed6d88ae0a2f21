// $set holds the changed properties (name with its name_key, description); null removes one.
MATCH (g:Group {id: $id})
SET g += $set
SET g.updated_at = datetime($now)
RETURN g {
  .id, .name, .description, .source, .connector_source, .connector_id, .created_at, .created_by, .updated_at,
  member_count: COUNT { (m)-[:MEMBER_OF]->(g) WHERE NOT m:Deleted }
} AS group
