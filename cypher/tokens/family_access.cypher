// The access tokens of a token family, when the family is revoked.
MATCH (:TokenFamily {id: $familyId})-[:ISSUED]->(t:AccessToken)
RETURN t.jti AS jti, t.expires_at AS expiresAt
