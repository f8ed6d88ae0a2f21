MATCH (c:Connector {token_hash: $tokenHash})
WHERE c.status = 'active'
RETURN c {.id, .name} AS connector
