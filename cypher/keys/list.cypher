// Keys that may still verify a token: the active one and those retired recently.
MATCH (k:SigningKey)
WHERE k.status = 'active' OR k.retired_at > datetime($retiredAfter)
RETURN k {.kid, .alg, .status, .public_jwk, .private_key, .created_at} AS key
ORDER BY k.created_at DESC
