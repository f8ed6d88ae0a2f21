// The per-request revocation check: one index seek.
MATCH (t:AccessToken {jti: $jti})
RETURN t.status AS status
