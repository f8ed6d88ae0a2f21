MATCH (c:Connector)
WHERE c.status IN $statuses
WITH c
ORDER BY c.created_at DESC, c.id DESC
SKIP $skip
LIMIT $limit
RETURN c {.id, .name, .description, profile: coalesce(c.profile, 'generic'), .status, .created_at, .created_by, .token_rotated_at, .deleted_at, .deleted_by} AS connector
