MATCH (c:Client)-[:HAS_TOKEN_FAMILY]->(f:TokenFamily)-[:ISSUED]->(t:AccessToken {jti: $jti})
RETURN t.status AS status, f.id AS familyId, c.id AS clientId
