// Marks the presented refresh token used and issues the next pair in the same family.
MATCH (f:TokenFamily {id: $familyId})-[:ISSUED]->(r:RefreshToken {hash: $hash})
SET r.status = 'rotated', r.rotated_at = datetime()
CREATE (f)-[:ISSUED]->(:AccessToken {jti: $jti, status: 'active', issued_at: datetime(), expires_at: datetime($accessExpiresAt)})
CREATE (f)-[:ISSUED]->(:RefreshToken {hash: $newHash, status: 'active', issued_at: datetime(), expires_at: datetime($refreshExpiresAt)})
RETURN f.id AS familyId
