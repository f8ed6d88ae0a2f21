MATCH (c:Connector {token_hash: $tokenHash})
WHERE c.status = 'active'
RETURN c {.id, .name, profile: coalesce(c.profile, 'generic')} AS connector
