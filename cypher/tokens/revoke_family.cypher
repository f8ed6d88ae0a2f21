MATCH (f:TokenFamily {id: $familyId})
SET f.status = 'revoked', f.revoked_at = coalesce(f.revoked_at, datetime()), f.revoked_reason = coalesce(f.revoked_reason, $reason)
WITH f
OPTIONAL MATCH (f)-[:ISSUED]->(t)
WHERE t.status <> 'revoked'
SET t.status = 'revoked', t.revoked_at = datetime()
RETURN f.id AS familyId, count(t) AS revoked
