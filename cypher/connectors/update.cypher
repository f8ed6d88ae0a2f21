// The connector's profile and description, under the lock its caller took. A connector stored
// before profiles existed has none and reads as 'generic' until this sets one.
MATCH (c:Connector {id: $id})
SET c.profile = $profile, c.description = $description
RETURN c {.id, .name, .description, .profile, .status, .created_at, .created_by, .token_rotated_at, .deleted_at, .deleted_by} AS connector
