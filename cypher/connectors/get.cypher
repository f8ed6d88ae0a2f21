MATCH (c:Connector {id: $id})
RETURN c {.id, .name, .description, profile: coalesce(c.profile, 'generic'), .status, .created_at, .created_by, .token_rotated_at, .deleted_at, .deleted_by} AS connector
