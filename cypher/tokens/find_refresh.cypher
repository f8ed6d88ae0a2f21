MATCH (c:Client)-[:HAS_TOKEN_FAMILY]->(f:TokenFamily)-[:ISSUED]->(r:RefreshToken {hash: $hash})
RETURN r.status AS status,
       r.expires_at <= datetime() AS expired,
       f.id AS familyId,
       f.status AS familyStatus,
       f.scope AS scope,
       c.id AS clientId,
       c.status AS clientStatus
