MATCH (g:Group {id: $id})
RETURN g {
  .id, .name, .description, .source, .connector_source, .connector_id, .created_at, .created_by, .updated_at,
  member_count: COUNT { (m)-[:MEMBER_OF]->(g) WHERE NOT m:Deleted }
} AS group
