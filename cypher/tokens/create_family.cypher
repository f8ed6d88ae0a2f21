// A client_credentials grant: a new token family with its first access and refresh tokens.
MATCH (c:Client {id: $clientId, status: 'active'})
CREATE (c)-[:HAS_TOKEN_FAMILY]->(f:TokenFamily {id: $familyId, status: 'active', scope: $scope, created_at: datetime()})
CREATE (f)-[:ISSUED]->(:AccessToken {jti: $jti, status: 'active', issued_at: datetime(), expires_at: datetime($accessExpiresAt)})
CREATE (f)-[:ISSUED]->(:RefreshToken {hash: $refreshHash, status: 'active', issued_at: datetime(), expires_at: datetime($refreshExpiresAt)})
RETURN f.id AS familyId
