MATCH (t:AccessToken {jti: $jti})
WHERE t.status <> 'revoked'
SET t.status = 'revoked', t.revoked_at = datetime()
RETURN t.jti AS jti
