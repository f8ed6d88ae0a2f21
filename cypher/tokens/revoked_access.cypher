// Revoked access tokens that have not expired yet: what an instance must refuse, loaded at start.
MATCH (t:AccessToken)
WHERE t.expires_at > datetime($now) AND t.status = 'revoked'
RETURN t.jti AS jti, t.expires_at AS expiresAt
