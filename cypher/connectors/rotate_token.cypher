MATCH (c:Connector {id: $id})
WHERE c.status = 'active'
SET c.token_hash = $tokenHash, c.token_rotated_at = datetime()
RETURN c {.id, .token_rotated_at} AS connector
